// A program with no OpenTelemetry code: run with the OpenTelemetry Java agent (-javaagent), its HTTP server and
// client calls become spans, its java.util.logging records log records, and the JVM's own metrics are sent too.
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.logging.Logger;

public class Main {
    private static final Logger LOG = Logger.getLogger("quickstart");

    public static void main(String[] args) throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/checkout", exchange -> {
            LOG.info("order placed");
            byte[] body = "ok".getBytes();
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/checkout");
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
        System.out.println("GET /checkout: " + response.statusCode());
        server.stop(0);
        // The agent sends what is batched when the JVM exits.
    }
}
