import { html, type SafeHtml, urlPart } from '../../render/html.js';

/** Pieces only the viewer's pages need: its links and its filter forms (shared ones are in src/render). */

export function runUrl(runId: string): string {
  return `/runs/${urlPart(runId)}`;
}

/** An attempt's page; a round of an adaptive attack's chain (SPEC §15) is named by `?round=N`. */
export function attemptUrl(runId: string, attack: string, attempt: number, round?: number): string {
  return `/runs/${urlPart(runId)}/attempts/${urlPart(attack)}/${attempt}${round === undefined ? '' : `?round=${round}`}`;
}

export function compareUrl(left: string, right: string): string {
  return `/compare?a=${urlPart(left)}&b=${urlPart(right)}`;
}

/** A select box for a GET form; `selected` is kept so the filtered page shows what filters it. */
export function select(
  name: string,
  label: string,
  options: ReadonlyArray<{ value: string; label: string }>,
  selected: string | undefined,
): SafeHtml {
  return html`<label>${label} <select name="${name}">${options.map(
    (option) =>
      html`<option value="${option.value}"${option.value === (selected ?? '') ? html` selected` : ''}>${option.label}</option>`,
  )}</select></label>`;
}
