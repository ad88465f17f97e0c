import { createHash } from 'node:crypto';
import * as z from 'zod';
import { canonicalJson, type JsonObject, JsonObjectSchema } from './record.js';

/**
 * Who produced a record: a source or a scorer, named by type, version and its non-secret configuration.
 * Two components configured differently never share an identifier, so never share a hash.
 */
export interface ComponentIdentifier {
  type: string;
  version: string;
  params: JsonObject;
  children?: Record<string, ComponentIdentifier> | undefined;
}

export const ComponentIdentifierSchema: z.ZodType<ComponentIdentifier> = z.lazy(() =>
  z.strictObject({
    type: z.string().min(1),
    version: z.string().min(1),
    params: JsonObjectSchema,
    children: z.record(z.string(), ComponentIdentifierSchema).optional(),
  }),
);

/** A stable hash (sha256 hex of canonical JSON) of an identifier: equal configuration, equal hash. */
export function identifierHash(identifier: ComponentIdentifier): string {
  return createHash('sha256').update(canonicalJson(identifier)).digest('hex');
}
