/** Attempt records and runs are stored records: see models/attempt-record.ts and models/campaign-run.ts. */
export type { AttemptRecord } from '../models/attempt-record.js';
export { AttemptRecordSchema } from '../models/attempt-record.js';
export type { CampaignRun } from '../models/campaign-run.js';
export { CampaignRunSchema } from '../models/campaign-run.js';
