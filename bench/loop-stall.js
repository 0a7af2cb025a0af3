// Loaded with --import into the server that npm run soak starts: the event loop's longest stall since the last
// question, asked and answered over the IPC channel, so that the server's own code carries no measuring hook.
import { monitorEventLoopDelay } from 'node:perf_hooks';

const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();

process.on('message', (message) => {
  if (message !== 'stall') return;
  process.send?.({ stallMs: delay.max / 1e6 });
  delay.reset();
});
