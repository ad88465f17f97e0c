import {
  type ApiFormat,
  asObject,
  isObject,
  pathEndsWith,
  pieces,
  type ReplyMeta,
  turnTokens,
  WireFormatError,
} from './api-format.js';
import type { Conversation, ConversationItem, ModelTurn, OfferedTool } from './conversation.js';

/**
 * The OpenAI Chat Completions wire format (`POST /v1/chat/completions`), both as one JSON object and as
 * a server-sent event stream (`stream: true`, ending in `data: [DONE]`), and the model list
 * (`GET /v1/models`, `/v1/models/<id>`). Only what a coding agent needs: text and function tool calls;
 * images and audio are ignored.
 */

export const openAiChatFormat: ApiFormat = {
  id: 'openai-chat',
  name: 'OpenAI Chat Completions',
  paths: ['/v1/chat/completions', '/v1/models'],
  endpointFor(path) {
    if (pathEndsWith(path, 'chat/completions')) {
      return {
        kind: 'generate',
        method: 'POST',
        parse(body) {
          const request = parseChatRequest(body);
          const meta = (reply: ReplyMeta): ResponseMeta => ({
            id: `chatcmpl-witness-${reply.serial}`,
            model: request.model,
            createdSeconds: reply.createdSeconds,
            promptTokens: reply.inputTokens,
          });
          return {
            model: request.model,
            stream: request.stream,
            conversation: request.conversation,
            render: (turn, reply) => renderChatCompletion(turn, meta(reply)),
            renderStream: (turn, reply) =>
              renderChatCompletionChunks(turn, meta(reply), request.includeUsage).map((data) => ({ data })),
          };
        },
      };
    }
    if (pathEndsWith(path, 'models')) return { kind: 'models', method: 'GET', list: renderModelList };
    const one = /(?:^|\/)models\/([^/:]+)$/.exec(path);
    if (one !== null) {
      const id = decodeURIComponent(one[1] as string);
      return { kind: 'models', method: 'GET', list: () => modelEntry(id) };
    }
    return undefined;
  },
  renderError: (_status, message, type) => renderOpenAiError(message, type),
};

export interface ParsedChatRequest {
  model: string;
  stream: boolean;
  includeUsage: boolean;
  conversation: Conversation;
}

function parseChatRequest(body: unknown): ParsedChatRequest {
  const request = asObject(body, 'the request body');
  if (!Array.isArray(request.messages)) throw new WireFormatError('messages must be an array');
  const system: string[] = [];
  const items: ConversationItem[] = [];
  for (const raw of request.messages) {
    const message = asObject(raw, 'a message');
    const text = contentText(message.content);
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(text);
        break;
      case 'user':
        // Each text part is its own item: clients put their context and the request in separate parts.
        for (const part of contentParts(message.content)) items.push({ kind: 'user', text: part });
        break;
      case 'assistant': {
        const calls = Array.isArray(message.tool_calls)
          ? message.tool_calls.map((call) => {
              const value = asObject(call, 'a tool call');
              const fn = asObject(value.function, 'a tool call function');
              return {
                id: String(value.id ?? ''),
                name: String(fn.name ?? ''),
                arguments: parseArguments(fn.arguments),
              };
            })
          : [];
        items.push({ kind: 'assistant', text, calls });
        break;
      }
      case 'tool':
        items.push({ kind: 'tool_result', callId: String(message.tool_call_id ?? ''), text });
        break;
      default:
        throw new WireFormatError(`unknown message role ${JSON.stringify(message.role)}`);
    }
  }
  const tools: OfferedTool[] = Array.isArray(request.tools)
    ? request.tools.flatMap((raw) => {
        const tool = asObject(raw, 'a tool');
        if (tool.type !== undefined && tool.type !== 'function') return [];
        const fn = asObject(tool.function, 'a tool function');
        return [
          {
            name: String(fn.name ?? ''),
            description: typeof fn.description === 'string' ? fn.description : '',
            parameters: isObject(fn.parameters) ? fn.parameters : {},
          },
        ];
      })
    : [];
  const options = isObject(request.stream_options) ? request.stream_options : {};
  return {
    model: typeof request.model === 'string' ? request.model : 'witness-scripted',
    stream: request.stream === true,
    includeUsage: options.include_usage === true,
    conversation: { system: system.join('\n'), items, tools },
  };
}

interface ResponseMeta {
  id: string;
  model: string;
  createdSeconds: number;
  promptTokens: number;
}

function renderChatCompletion(turn: ModelTurn, meta: ResponseMeta): Record<string, unknown> {
  const completionTokens = turnTokens(turn);
  const message =
    turn.kind === 'text'
      ? { role: 'assistant', content: turn.text, refusal: null }
      : {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [
            {
              id: turn.call.id,
              type: 'function',
              function: { name: turn.call.name, arguments: JSON.stringify(turn.call.arguments) },
            },
          ],
        };
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.createdSeconds,
    model: meta.model,
    choices: [
      { index: 0, message, logprobs: null, finish_reason: turn.kind === 'text' ? 'stop' : 'tool_calls' },
    ],
    usage: usage(meta.promptTokens, completionTokens),
  };
}

/** The SSE `data:` payloads of a streamed completion, in order, `[DONE]` last. */
function renderChatCompletionChunks(turn: ModelTurn, meta: ResponseMeta, includeUsage: boolean): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    JSON.stringify({
      id: meta.id,
      object: 'chat.completion.chunk',
      created: meta.createdSeconds,
      model: meta.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
  const frames = [chunk({ role: 'assistant', content: '' }, null)];
  if (turn.kind === 'text') {
    for (const piece of pieces(turn.text)) frames.push(chunk({ content: piece }, null));
    frames.push(chunk({}, 'stop'));
  } else {
    const args = JSON.stringify(turn.call.arguments);
    frames.push(
      chunk(
        {
          tool_calls: [
            {
              index: 0,
              id: turn.call.id,
              type: 'function',
              function: { name: turn.call.name, arguments: '' },
            },
          ],
        },
        null,
      ),
    );
    for (const piece of pieces(args))
      frames.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }, null));
    frames.push(chunk({}, 'tool_calls'));
  }
  if (includeUsage) {
    frames.push(
      JSON.stringify({
        id: meta.id,
        object: 'chat.completion.chunk',
        created: meta.createdSeconds,
        model: meta.model,
        choices: [],
        usage: usage(meta.promptTokens, turnTokens(turn)),
      }),
    );
  }
  frames.push('[DONE]');
  return frames;
}

function renderModelList(models: readonly string[]): Record<string, unknown> {
  return { object: 'list', data: models.map(modelEntry) };
}

function modelEntry(id: string): Record<string, unknown> {
  return { id, object: 'model', created: 0, owned_by: 'witness' };
}

function renderOpenAiError(message: string, type: string): Record<string, unknown> {
  return { error: { message, type, param: null, code: null } };
}

function usage(prompt: number, completion: number) {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function contentText(content: unknown): string {
  return contentParts(content).join('\n');
}

function contentParts(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part) => (isObject(part) && typeof part.text === 'string' ? [part.text] : []));
}

function parseArguments(raw: unknown): Record<string, unknown> {
  if (isObject(raw)) return raw;
  if (typeof raw !== 'string' || raw === '') return {};
  try {
    const value: unknown = JSON.parse(raw);
    return isObject(value) ? value : {};
  } catch {
    return {};
  }
}
