import {
  type ApiFormat,
  asObject,
  estimateTokens,
  isObject,
  pathEndsWith,
  pieces,
  type ReplyMeta,
  turnTokens,
  WireFormatError,
} from './api-format.js';
import type { Conversation, ConversationItem, ModelTurn, OfferedTool } from './conversation.js';

/**
 * The Anthropic Messages wire format (`POST /v1/messages`), as one JSON message or as the named SSE
 * events a streaming client expects (`message_start` … `message_stop`). Text, `tool_use` and
 * `tool_result` blocks are understood; thinking and image blocks are ignored.
 */

export const anthropicMessagesFormat: ApiFormat = {
  id: 'anthropic-messages',
  name: 'Anthropic Messages',
  paths: ['/v1/messages', '/v1/messages/count_tokens'],
  endpointFor(path) {
    if (pathEndsWith(path, 'messages/count_tokens'))
      return { kind: 'count_tokens', method: 'POST', count: renderTokenCount };
    if (!pathEndsWith(path, 'messages')) return undefined;
    return {
      kind: 'generate',
      method: 'POST',
      parse(body) {
        const request = parseMessagesRequest(body);
        const meta = (reply: ReplyMeta): MessageMeta => ({
          id: `msg_witness_${reply.serial}`,
          model: request.model,
          inputTokens: reply.inputTokens,
        });
        return {
          ...request,
          render: (turn, reply) => renderMessage(turn, meta(reply)),
          renderStream: (turn, reply) => renderMessageEvents(turn, meta(reply)),
        };
      },
    };
  },
  renderError: (_status, message, type) => ({ type: 'error', error: { type, message } }),
};

interface ParsedMessagesRequest {
  model: string;
  stream: boolean;
  conversation: Conversation;
}

function parseMessagesRequest(body: unknown): ParsedMessagesRequest {
  const request = asObject(body, 'the request body');
  if (!Array.isArray(request.messages)) throw new WireFormatError('messages must be an array');
  const items: ConversationItem[] = [];
  for (const raw of request.messages) {
    const message = asObject(raw, 'a message');
    const blocks =
      typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    if (!Array.isArray(blocks))
      throw new WireFormatError('message content must be a string or an array of blocks');
    if (message.role === 'user') {
      const texts: string[] = [];
      for (const block of blocks) {
        if (!isObject(block)) continue;
        if (block.type === 'tool_result') {
          items.push({
            kind: 'tool_result',
            callId: String(block.tool_use_id ?? ''),
            text: blockText(block.content),
          });
        } else if (block.type === 'text' && typeof block.text === 'string') {
          texts.push(block.text);
        }
      }
      // Each text block is its own item: clients put their context and the request in separate blocks.
      for (const text of texts) items.push({ kind: 'user', text });
    } else if (message.role === 'assistant') {
      const texts: string[] = [];
      const calls = [];
      for (const block of blocks) {
        if (!isObject(block)) continue;
        if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
        if (block.type === 'tool_use') {
          calls.push({
            id: String(block.id ?? ''),
            name: String(block.name ?? ''),
            arguments: isObject(block.input) ? block.input : {},
          });
        }
      }
      items.push({ kind: 'assistant', text: texts.join('\n'), calls });
    } else {
      throw new WireFormatError(`unknown message role ${JSON.stringify(message.role)}`);
    }
  }
  const tools: OfferedTool[] = Array.isArray(request.tools)
    ? request.tools.flatMap((raw) => {
        if (!isObject(raw) || typeof raw.name !== 'string') return [];
        return [
          {
            name: raw.name,
            description: typeof raw.description === 'string' ? raw.description : '',
            parameters: isObject(raw.input_schema) ? raw.input_schema : {},
          },
        ];
      })
    : [];
  return {
    model: typeof request.model === 'string' ? request.model : 'witness-scripted',
    stream: request.stream === true,
    conversation: { system: blockText(request.system), items, tools },
  };
}

interface MessageMeta {
  id: string;
  model: string;
  inputTokens: number;
}

function contentBlock(turn: ModelTurn): Record<string, unknown> {
  return turn.kind === 'text'
    ? { type: 'text', text: turn.text }
    : { type: 'tool_use', id: turn.call.id, name: turn.call.name, input: turn.call.arguments };
}

function renderMessage(turn: ModelTurn, meta: MessageMeta): Record<string, unknown> {
  return {
    id: meta.id,
    type: 'message',
    role: 'assistant',
    model: meta.model,
    content: [contentBlock(turn)],
    stop_reason: turn.kind === 'text' ? 'end_turn' : 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: meta.inputTokens, output_tokens: turnTokens(turn) },
  };
}

/** The SSE events of a streamed message, in order: `{ event, data }` pairs. */
function renderMessageEvents(turn: ModelTurn, meta: MessageMeta): Array<{ event: string; data: string }> {
  const events: Array<{ event: string; data: string }> = [];
  const emit = (event: string, data: Record<string, unknown>) =>
    events.push({ event, data: JSON.stringify({ type: event, ...data }) });
  emit('message_start', {
    message: {
      id: meta.id,
      type: 'message',
      role: 'assistant',
      model: meta.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: meta.inputTokens, output_tokens: 1 },
    },
  });
  if (turn.kind === 'text') {
    emit('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    for (const piece of pieces(turn.text))
      emit('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } });
  } else {
    emit('content_block_start', {
      index: 0,
      content_block: { type: 'tool_use', id: turn.call.id, name: turn.call.name, input: {} },
    });
    for (const piece of pieces(JSON.stringify(turn.call.arguments))) {
      emit('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: piece } });
    }
  }
  emit('content_block_stop', { index: 0 });
  emit('message_delta', {
    delta: { stop_reason: turn.kind === 'text' ? 'end_turn' : 'tool_use', stop_sequence: null },
    usage: { output_tokens: turnTokens(turn) },
  });
  emit('message_stop', {});
  return events;
}

function renderTokenCount(body: unknown): Record<string, unknown> {
  return { input_tokens: estimateTokens(JSON.stringify(body)) };
}

function blockText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .flatMap((block) => (isObject(block) && typeof block.text === 'string' ? [block.text] : []))
    .join('\n');
}
