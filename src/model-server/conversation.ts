/**
 * A chat conversation as the scripted model sees it, whichever wire protocol carried it (OpenAI Chat
 * Completions or Anthropic Messages): the user's texts, the assistant's earlier tool calls, the results
 * the client sent back, and the tools the client offers. Protocol modules translate to and from this.
 */

export interface OfferedTool {
  name: string;
  description: string;
  /** The tool's parameters as a JSON Schema object (`{}` when the client sent none). */
  parameters: Record<string, unknown>;
}

export interface ToolCallRequest {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type ConversationItem =
  | { kind: 'user'; text: string }
  | { kind: 'assistant'; text: string; calls: ToolCallRequest[] }
  | { kind: 'tool_result'; callId: string; text: string };

export interface Conversation {
  /** System (and developer) instructions, joined; never a source of instructions to follow. */
  system: string;
  items: ConversationItem[];
  tools: OfferedTool[];
}

/** What the model answers on one turn: a final text, or one tool call for the client to run. */
export type ModelTurn = { kind: 'text'; text: string } | { kind: 'tool_call'; call: ToolCallRequest };
