import { markBidi } from '../text';
import { formatCount } from '../format';
import { Section } from './AttrTable';
import { conversationOf } from './genai';
import type { Span } from '../generated/api';

/** A model call's span as a conversation: who said what, the tools it called and what they answered, and the tokens. */
export function GenAiConversation({ span }: { span: Span }) {
  const c = conversationOf(span);
  if (!c) return null;
  const model = c.responseModel || c.requestModel;
  return (
    <Section title="Conversation" count={c.messages.length}>
      <div className="genai-facts" data-genai-model={model}>
        {c.provider && <span className="badge">{c.provider}</span>}
        {c.operation && <span className="muted">{c.operation}</span>}
        {model && (
          <span>
            model <b>{markBidi(model)}</b>
            {c.requestModel && c.responseModel && c.requestModel !== c.responseModel && <span className="muted"> (asked for {markBidi(c.requestModel)})</span>}
          </span>
        )}
        {c.inputTokens !== null && (
          <span data-tokens="in">
            <b>{formatCount(c.inputTokens)}</b> tokens in
          </span>
        )}
        {c.outputTokens !== null && (
          <span data-tokens="out">
            <b>{formatCount(c.outputTokens)}</b> tokens out
          </span>
        )}
      </div>
      {c.messages.length === 0 ? (
        <div className="muted small">The span records no messages (content capture is usually off by default in the instrumentation).</div>
      ) : (
        <ol className="genai-messages">
          {c.messages.map((m, i) => (
            <li key={i} className={`genai-message role-${m.role}`} data-role={m.role}>
              <div className="genai-role">
                {m.role}
                {m.toolCallId && <span className="muted mono small"> answers {m.toolCallId}</span>}
                {m.finishReason && <span className="muted small"> · {m.finishReason}</span>}
              </div>
              {m.text && <div className="genai-text">{markBidi(m.text)}</div>}
              {m.toolCalls.map((t, j) => (
                <div key={j} className="genai-tool-call" data-tool={t.name}>
                  <span className="badge">tool call</span> <b className="mono">{markBidi(t.name)}</b>
                  {t.id && <span className="muted mono small"> {t.id}</span>}
                  {t.arguments && <pre className="mono small">{markBidi(t.arguments)}</pre>}
                </div>
              ))}
            </li>
          ))}
        </ol>
      )}
    </Section>
  );
}
