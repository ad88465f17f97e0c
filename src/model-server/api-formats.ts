import { anthropicMessagesFormat } from './anthropic-messages.js';
import type { ApiFormat, Endpoint } from './api-format.js';
import { geminiFormat } from './gemini-generate.js';
import { openAiChatFormat } from './openai-chat.js';
import { openAiResponsesFormat } from './openai-responses.js';

/**
 * Every wire API `witness model serve` speaks, in the order their paths are tried. Their paths do not
 * overlap (a test holds each format to its own), so the order only decides which error shape answers a
 * path no format owns: the first format's (OpenAI's), the API most clients speak.
 */
export const API_FORMATS: readonly ApiFormat[] = [
  openAiChatFormat,
  openAiResponsesFormat,
  anthropicMessagesFormat,
  geminiFormat,
];

/** The format owning `path` and its endpoint there, or undefined when no format serves it. */
export function routeRequest(path: string): { format: ApiFormat; endpoint: Endpoint } | undefined {
  for (const format of API_FORMATS) {
    const endpoint = format.endpointFor(path);
    if (endpoint !== undefined) return { format, endpoint };
  }
  return undefined;
}
