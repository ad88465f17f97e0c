import {
  type ApiFormat,
  asObject,
  estimateTokens,
  isObject,
  turnTokens,
  WireFormatError,
} from './api-format.js';
import type { Conversation, ConversationItem, ModelTurn, OfferedTool } from './conversation.js';

/**
 * The Gemini API wire format (`POST /v1beta/models/<model>:generateContent`, `:streamGenerateContent`
 * with `alt=sse`, `:countTokens`), which Gemini CLI speaks. Function calls carry no id in this API: the
 * n-th `functionResponse` answers the n-th `functionCall`, and ids are assigned by position.
 */

export const geminiFormat: ApiFormat = {
  id: 'gemini',
  name: 'Gemini',
  paths: [
    '/v1beta/models/<model>:generateContent',
    '/v1beta/models/<model>:streamGenerateContent',
    '/v1beta/models/<model>:countTokens',
  ],
  endpointFor(path) {
    const match = /(?:^|\/)models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(path);
    if (match === null) return undefined;
    const model = decodeURIComponent(match[1] as string);
    const method = match[2] as string;
    if (method === 'countTokens') return { kind: 'count_tokens', method: 'POST', count: renderCountTokens };
    return {
      kind: 'generate',
      method: 'POST',
      parse(body) {
        return {
          model,
          // The stream method streams whatever the body says; the answer is one SSE frame of the response.
          stream: method === 'streamGenerateContent',
          conversation: parseGenerateRequest(body),
          render: (turn, reply) => renderGenerateResponse(turn, model, reply.inputTokens),
          renderStream: (turn, reply) => [
            { data: JSON.stringify(renderGenerateResponse(turn, model, reply.inputTokens)), lineEnd: '\r\n' },
          ],
        };
      },
    };
  },
  renderError: (status, message) => ({
    error: { code: status, message, status: status === 404 ? 'NOT_FOUND' : 'INVALID_ARGUMENT' },
  }),
};

function parseGenerateRequest(body: unknown): Conversation {
  const request = asObject(body, 'the request body');
  if (!Array.isArray(request.contents)) throw new WireFormatError('contents must be an array');
  const items: ConversationItem[] = [];
  let calls = 0;
  let responses = 0;
  for (const raw of request.contents) {
    const content = asObject(raw, 'a content');
    const parts = Array.isArray(content.parts) ? content.parts.filter(isObject) : [];
    const texts = parts.flatMap((part) =>
      typeof part.text === 'string' && part.thought !== true ? [part.text] : [],
    );
    if (content.role === 'model') {
      const made = parts.flatMap((part) => {
        if (!isObject(part.functionCall)) return [];
        calls++;
        const fn = part.functionCall;
        return [
          {
            id: `gemini_call_${calls}`,
            name: String(fn.name ?? ''),
            arguments: isObject(fn.args) ? fn.args : {},
          },
        ];
      });
      items.push({ kind: 'assistant', text: texts.join('\n'), calls: made });
    } else {
      for (const part of parts) {
        if (!isObject(part.functionResponse)) continue;
        responses++;
        const response = part.functionResponse.response;
        const text = isObject(response)
          ? typeof response.output === 'string'
            ? response.output
            : typeof response.error === 'string'
              ? response.error
              : JSON.stringify(response)
          : String(response ?? '');
        items.push({ kind: 'tool_result', callId: `gemini_call_${responses}`, text });
      }
      for (const text of texts) items.push({ kind: 'user', text });
    }
  }
  const tools: OfferedTool[] = Array.isArray(request.tools)
    ? request.tools.filter(isObject).flatMap((tool) =>
        (Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations.filter(isObject) : []).map(
          (fn) => ({
            name: String(fn.name ?? ''),
            description: typeof fn.description === 'string' ? fn.description : '',
            parameters: lowerCaseTypes(
              isObject(fn.parametersJsonSchema)
                ? fn.parametersJsonSchema
                : isObject(fn.parameters)
                  ? fn.parameters
                  : {},
            ),
          }),
        ),
      )
    : [];
  const system =
    isObject(request.systemInstruction) && Array.isArray(request.systemInstruction.parts)
      ? request.systemInstruction.parts
          .flatMap((part) => (isObject(part) && typeof part.text === 'string' ? [part.text] : []))
          .join('\n')
      : '';
  return { system, items, tools };
}

function renderGenerateResponse(
  turn: ModelTurn,
  model: string,
  promptTokens: number,
): Record<string, unknown> {
  const part =
    turn.kind === 'text'
      ? { text: turn.text }
      : { functionCall: { name: turn.call.name, args: turn.call.arguments } };
  const candidates = turnTokens(turn);
  return {
    candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: {
      promptTokenCount: promptTokens,
      candidatesTokenCount: candidates,
      totalTokenCount: promptTokens + candidates,
    },
    modelVersion: model,
  };
}

function renderCountTokens(body: unknown): Record<string, unknown> {
  return { totalTokens: estimateTokens(JSON.stringify(body)) };
}

/** Gemini schemas may spell types in upper case (`STRING`, `ARRAY`); the tool mapping reads lower case. */
function lowerCaseTypes(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const lowered: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(properties)) {
    lowered[name] =
      isObject(value) && typeof value.type === 'string'
        ? { ...value, type: value.type.toLowerCase() }
        : value;
  }
  return { ...schema, properties: lowered };
}
