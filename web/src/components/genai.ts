import type { AnyValue as AttrValue, Attributes as Attrs, Span } from '../generated/api';

/** One call a model asked for, or its answer (a tool message names the call it answers). */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ChatMessage {
  role: string;
  text: string;
  toolCalls: ToolCall[];
  /** For a tool's answer: the call it answers. */
  toolCallId: string;
  finishReason: string;
}

export interface Conversation {
  provider: string;
  operation: string;
  requestModel: string;
  responseModel: string;
  inputTokens: number | null;
  outputTokens: number | null;
  messages: ChatMessage[];
}

const text = (v: AttrValue | undefined): string => (v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v));
const num = (v: AttrValue | undefined): number | null =>
  typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : null;

/** A JSON string or an already structured value, as a value; the text itself when it is not JSON. */
function parsed(v: AttrValue | undefined): AttrValue | undefined {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as AttrValue;
  } catch {
    return v;
  }
}

const asObject = (v: AttrValue | undefined): Record<string, AttrValue> => (v && typeof v === 'object' && !Array.isArray(v) ? v : {});

function message(role: string, fields: Partial<ChatMessage>): ChatMessage {
  return { role, text: '', toolCalls: [], toolCallId: '', finishReason: '', ...fields };
}

/** Tool calls as OpenAI-style objects ({ id, function: { name, arguments } }) or flat ({ id, name, arguments }). */
function toolCallsOf(v: AttrValue | undefined): ToolCall[] {
  const list = parsed(v);
  if (!Array.isArray(list)) return [];
  return list.map((c) => {
    const o = asObject(c);
    const fn = asObject(o.function);
    return { id: text(o.id), name: text(fn.name ?? o.name), arguments: text(parsed(fn.arguments ?? o.arguments)) };
  });
}

/** gen_ai.input.messages / gen_ai.output.messages: [{ role, parts: [{ type: 'text', content } | { type: 'tool_call', … }], finish_reason }]. */
function fromMessageList(v: AttrValue | undefined, fallbackRole: string): ChatMessage[] {
  const list = parsed(v);
  if (!Array.isArray(list)) return typeof list === 'string' && list ? [message(fallbackRole, { text: list })] : [];
  return list.map((m) => {
    const o = asObject(m);
    const parts = Array.isArray(o.parts) ? o.parts.map(asObject) : [];
    const texts = parts.filter((p) => p.type === 'text' || p.type === 'reasoning').map((p) => text(p.content));
    const calls = parts.filter((p) => p.type === 'tool_call').map((p) => ({ id: text(p.id), name: text(p.name), arguments: text(parsed(p.arguments)) }));
    const response = parts.find((p) => p.type === 'tool_call_response');
    return message(text(o.role) || fallbackRole, {
      text: [...texts, ...(o.content !== undefined ? [text(o.content)] : []), ...(response ? [text(parsed(response.response ?? response.result))] : [])].join('\n'),
      toolCalls: [...calls, ...toolCallsOf(o.tool_calls)],
      toolCallId: text(response?.id ?? o.tool_call_id),
      finishReason: text(o.finish_reason),
    });
  });
}

/** gen_ai.prompt.0.role, gen_ai.prompt.0.content, gen_ai.completion.0.tool_calls.0.name, …: the indexed form. */
function fromIndexed(attrs: Attrs, prefix: 'gen_ai.prompt' | 'gen_ai.completion', fallbackRole: string): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (let i = 0; ; i++) {
    const at = `${prefix}.${i}.`;
    if (!Object.keys(attrs).some((k) => k.startsWith(at))) return out;
    const calls: ToolCall[] = [];
    for (let j = 0; attrs[`${at}tool_calls.${j}.name`] !== undefined; j++) {
      calls.push({
        id: text(attrs[`${at}tool_calls.${j}.id`]),
        name: text(attrs[`${at}tool_calls.${j}.name`]),
        arguments: text(parsed(attrs[`${at}tool_calls.${j}.arguments`])),
      });
    }
    out.push(
      message(text(attrs[`${at}role`]) || fallbackRole, {
        text: text(attrs[`${at}content`]),
        toolCalls: calls,
        toolCallId: text(attrs[`${at}tool_call_id`]),
        finishReason: text(attrs[`${at}finish_reason`]),
      }),
    );
  }
}

const EVENT_ROLES: Record<string, string> = {
  'gen_ai.system.message': 'system',
  'gen_ai.user.message': 'user',
  'gen_ai.assistant.message': 'assistant',
  'gen_ai.tool.message': 'tool',
};

/** The message events (gen_ai.user.message, …, gen_ai.choice), and the older gen_ai.content.prompt / completion. */
function fromEvents(span: Span): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const ev of span.events) {
    const a = ev.attributes;
    const body = asObject(parsed(a['gen_ai.event.content'] ?? a.body));
    const field = (k: string) => a[k] ?? body[k];
    if (ev.name in EVENT_ROLES) {
      out.push(
        message(text(field('role')) || EVENT_ROLES[ev.name], {
          text: text(field('content')),
          toolCalls: toolCallsOf(field('tool_calls')),
          toolCallId: text(field('id') ?? field('tool_call_id')),
        }),
      );
    } else if (ev.name === 'gen_ai.choice') {
      const m = asObject(parsed(field('message')));
      out.push(
        message(text(m.role) || 'assistant', {
          text: text(parsed(m.content ?? field('content'))),
          toolCalls: toolCallsOf(m.tool_calls ?? field('tool_calls')),
          finishReason: text(field('finish_reason')),
        }),
      );
    } else if (ev.name === 'gen_ai.content.prompt') {
      out.push(...fromMessageList(a['gen_ai.prompt'], 'user'));
    } else if (ev.name === 'gen_ai.content.completion') {
      out.push(...fromMessageList(a['gen_ai.completion'], 'assistant'));
    }
  }
  return out;
}

/** The span as a model call (OpenTelemetry's gen_ai.* conventions, old and new), or null when it is none. */
export function conversationOf(span: Span): Conversation | null {
  const a = span.attributes;
  const isGenAi = Object.keys(a).some((k) => k.startsWith('gen_ai.')) || span.events.some((e) => e.name.startsWith('gen_ai.'));
  if (!isGenAi) return null;
  const messages = [
    ...fromMessageList(a['gen_ai.system_instructions'], 'system'),
    ...fromMessageList(a['gen_ai.input.messages'], 'user'),
    ...fromIndexed(a, 'gen_ai.prompt', 'user'),
    ...fromEvents(span),
    ...fromMessageList(a['gen_ai.output.messages'], 'assistant'),
    ...fromIndexed(a, 'gen_ai.completion', 'assistant'),
  ];
  return {
    provider: text(a['gen_ai.provider.name'] ?? a['gen_ai.system']),
    operation: text(a['gen_ai.operation.name']),
    requestModel: text(a['gen_ai.request.model']),
    responseModel: text(a['gen_ai.response.model']),
    inputTokens: num(a['gen_ai.usage.input_tokens'] ?? a['gen_ai.usage.prompt_tokens']),
    outputTokens: num(a['gen_ai.usage.output_tokens'] ?? a['gen_ai.usage.completion_tokens']),
    messages,
  };
}
