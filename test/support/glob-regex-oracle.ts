/**
 * A reference glob-segment matcher for differential tests only: the segment translated to a RegExp, the
 * way the locator parser once validated segments. Never used by Witness itself (a RegExp backtracks on
 * attacker-chosen names; segment-matcher.ts is linear). Returns null where the translation refuses the
 * segment (unterminated "[" or "{", extended glob, a RegExp that does not compile).
 */
export function globSegmentRegex(segment: string): RegExp | null {
  if (/[@+!]\(/.test(segment) && !segment.includes('[')) return null;
  let out = '';
  let i = 0;
  let open = 0;
  while (i < segment.length) {
    const ch = segment[i] as string;
    if (ch === '*') {
      while (segment[i + 1] === '*') i++;
      out += '[^/]*';
    } else if (ch === '?') {
      out += '[^/]';
    } else if (ch === '[') {
      let end = i + 1;
      if (segment[end] === '!' || segment[end] === '^') end++;
      if (segment[end] === ']') end++;
      while (end < segment.length && segment[end] !== ']') end++;
      if (end >= segment.length) return null;
      let body = segment.slice(i + 1, end);
      const negated = body.startsWith('!') || body.startsWith('^');
      if (negated) body = body.slice(1);
      out += `[${negated ? '^' : ''}${body.replace(/[\\\]^[]/g, (c) => `\\${c}`)}]`;
      i = end;
    } else if (ch === '{') {
      open++;
      out += '(?:';
    } else if (ch === ',' && open > 0) {
      out += '|';
    } else if (ch === '}' && open > 0) {
      open--;
      out += ')';
    } else {
      if (ch === '(' && '@+!*?'.includes(segment[i - 1] ?? '')) return null;
      out += ch.replace(/[.*+?^${}()|[\]\\/]/g, (c) => `\\${c}`);
    }
    i++;
  }
  if (open > 0) return null;
  try {
    return new RegExp(`^${out}$`, 'u');
  } catch {
    return null;
  }
}
