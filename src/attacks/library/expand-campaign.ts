import { parseDocument, stringify } from 'yaml';
import type { Campaign } from '../campaign.js';
import { parseCampaign } from '../campaign-file.js';
import { expandCampaignMatrix, type LibraryAttack } from './matrix.js';

/**
 * A campaign file with its `matrix:` written out as attacks, for review (`witness attacks expand`). The
 * text is validated exactly as `witness run` validates it (errors name file, line and column), and the
 * output is the same campaign in plain YAML — keys in the order written, the matrix replaced by its
 * attacks — so running the printed file is the same as running the original.
 */
export interface ExpandedCampaign {
  yaml: string;
  campaign: Campaign;
  /** The attacks the matrix produced (hand-written attacks are not listed here). */
  generated: LibraryAttack[];
}

export function expandCampaignText(text: string, name: string): ExpandedCampaign {
  const campaign = parseCampaign(text, name);
  const expansion = expandCampaignMatrix(parseDocument(text).toJS());
  // parseCampaign succeeded on the same text, so the expansion did too.
  if (!expansion.success) throw expansion.error;
  const data = expansion.data as { attacks?: unknown[] };
  const generated = (data.attacks ?? []).slice(expansion.handWritten) as LibraryAttack[];
  return { yaml: stringify(data, { lineWidth: 0 }), campaign, generated };
}
