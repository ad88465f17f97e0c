/**
 * Hostile output is bounded before it is validated (SPEC §13, "a run survives its agents"): an agent
 * chooses the JSON of its tool calls and of the requests it sends to its model, and a value nested a
 * thousand objects deep (6 KB of text) overflows the stack of the recursive schema validation that every
 * stored record goes through, ending the whole run. This copy keeps every value down to `maxDepth` levels
 * and puts {@link TOO_DEEP} in place of a container nested deeper; it walks with its own stack, so its
 * input may be nested as deep as `JSON.parse` allows.
 */

/** Nesting levels kept of agent-chosen JSON: far deeper than any real tool call or model request. */
export const MAX_JSON_DEPTH = 64;

/** What stands in for a container nested deeper than the bound. */
export const TOO_DEEP = `[nested deeper than ${MAX_JSON_DEPTH} levels: not kept]`;

/**
 * A copy of `value` with every array or object below `maxDepth` levels replaced by {@link TOO_DEEP}
 * (the value itself is level 1). Values that are not JSON (undefined, functions) are copied as they are:
 * validation still judges them.
 */
export function boundJsonDepth<T>(value: T, maxDepth = MAX_JSON_DEPTH): T {
  if (!isContainer(value)) return value;
  const root: Slots = {};
  // Each task copies one source container into its (already placed) slot of the parent's copy.
  const tasks: Task[] = [{ source: value, parent: root, key: 'value', depth: 1 }];
  for (let task = tasks.pop(); task !== undefined; task = tasks.pop()) {
    const { source, parent, key, depth } = task;
    if (depth > maxDepth) {
      put(parent, key, TOO_DEEP);
      continue;
    }
    const copy = (Array.isArray(source) ? new Array(source.length) : {}) as Slots;
    put(parent, key, copy);
    for (const [childKey, child] of Object.entries(source)) {
      // A container's slot is placed now and filled later, so the copy keeps the source's key order.
      put(copy, childKey, isContainer(child) ? null : child);
      if (isContainer(child)) tasks.push({ source: child, parent: copy, key: childKey, depth: depth + 1 });
    }
  }
  return root.value as T;
}

type Slots = Record<string, unknown>;
interface Task {
  source: object;
  parent: Slots;
  key: string;
  depth: number;
}

/** An own, enumerable property, whatever its name: `__proto__` from `JSON.parse` stays a plain key. */
function put(target: Slots, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}
