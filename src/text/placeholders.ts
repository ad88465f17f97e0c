/**
 * Fills `{name}` placeholders in a template (a command's arguments and stdin, an MCP server's arguments):
 * each `{name}` whose name is in `values` is replaced, in one pass over the template, so substituted text
 * is never scanned again — a prompt that mentions `{workspace}` reaches the agent as written. A placeholder
 * not in `values` stays as written (filled later by whoever knows it: `{campaignDir}` when the campaign is
 * loaded, `{prompt}` and `{workspace}` when the attempt starts).
 *
 * @example
 *   fillPlaceholders('--cwd={workspace} {prompt}', { workspace: '/w', prompt: 'say {workspace}' })
 *   // → '--cwd=/w say {workspace}'
 */
export function fillPlaceholders(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(PLACEHOLDER, (match, name: string) =>
    Object.hasOwn(values, name) ? (values[name] as string) : match,
  );
}

const PLACEHOLDER = /\{([A-Za-z][A-Za-z0-9]*)\}/g;

/**
 * The scripts a configuration's arguments name: each absolute path with no placeholder left in it (such as
 * `{campaignDir}/agent.mjs` once the campaign is loaded). Never an argument the prompt fills in. The
 * sandbox shows the package each lives in; the preflight checks each exists.
 */
export function scriptArguments(args: readonly string[] | undefined): string[] {
  return (args ?? []).filter((arg) => arg.startsWith('/') && !/\{[A-Za-z][A-Za-z0-9_]*\}/.test(arg));
}
