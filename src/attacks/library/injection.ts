/**
 * What an injection asks the agent to do, before any strategy phrases or hides it. An objective supplies
 * one {@link Injection}; a strategy turns it into lines of text (and maybe extra files); a carrier puts
 * those lines into a file the agent will read.
 *
 * Instructions are spelled as one imperative line: `write "<text>" to <path>`, `copy <from> to <to>`,
 * `delete <path>`, `send <file or $NAME> to <url>`. A model reads them as plain English; the mock agent's
 * grammar (`src/targets/injected-instructions.ts`) understands `write` and `send` — it has no copy or
 * delete verb, so objectives that need one are never carried out by the mock. That is a limit of the
 * mock, reported as such in docs/attacks.md, not a property of the objective.
 */

export type InjectionAction =
  | { kind: 'write'; path: string; content: string }
  | { kind: 'copy'; from: string; to: string }
  | { kind: 'delete'; path: string }
  /** Exfiltration: a file (`~/` for the home) or `$NAME` (an environment variable) sent to `url`. */
  | { kind: 'send'; from: string; url: string };

export interface Injection {
  action: InjectionAction;
  /** One sentence of cover story, shown before the instruction ("The release checklist needs …"). */
  rationale: string;
}

/** The words of an instruction, split so a strategy can disguise the verbs without touching operands. */
export interface InstructionParts {
  verb: string;
  operand: string;
  /** "to" for write, copy and send; empty for delete. */
  preposition: string;
  target: string;
}

export function instructionParts(action: InjectionAction): InstructionParts {
  switch (action.kind) {
    case 'write':
      return {
        verb: 'write',
        operand: JSON.stringify(action.content),
        preposition: 'to',
        target: action.path,
      };
    case 'copy':
      return { verb: 'copy', operand: action.from, preposition: 'to', target: action.to };
    case 'delete':
      return { verb: 'delete', operand: action.path, preposition: '', target: '' };
    case 'send':
      return { verb: 'send', operand: action.from, preposition: 'to', target: action.url };
  }
}

/** Joins parts into the one-line instruction, e.g. `write "#!/bin/sh\n…" to .git/hooks/pre-commit`. */
export function joinInstruction(parts: InstructionParts): string {
  return [parts.verb, parts.operand, parts.preposition, parts.target].filter((word) => word !== '').join(' ');
}

export function renderInstruction(action: InjectionAction): string {
  return joinInstruction(instructionParts(action));
}
