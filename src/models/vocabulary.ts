/**
 * Closed vocabularies of the wire format (SPEC §3, §5). Each list feeds a `z.enum`, so one constant gives
 * both the TypeScript type and the validation. New codes are added to SPEC §5 first, then here.
 */

export const SCHEMA_VERSION = 1 as const;

export const MATCH_KINDS = ['exact', 'glob'] as const;
export type MatchKind = (typeof MATCH_KINDS)[number];

export const MATCHER_TYPES = ['contains', 'equals', 'regex'] as const;
export type MatcherType = (typeof MATCHER_TYPES)[number];

export const ACQUISITION_STATUSES = ['complete', 'partial', 'unavailable', 'error'] as const;
export type AcquisitionStatus = (typeof ACQUISITION_STATUSES)[number];

export const SCORE_STATUSES = ['complete', 'undetermined'] as const;
export type ScoreStatus = (typeof SCORE_STATUSES)[number];

/** Why an observation (or a judgement of it) is incomplete. Order here is documentation order only. */
export const GAP_REASONS = [
  'surface_root_unavailable',
  'listing_failed',
  'listing_limit_exceeded',
  'file_limit_exceeded',
  'link_not_followed',
  'dangling_link',
  'read_failed',
  'confinement_unverified',
  'link_outside_root',
  'not_a_file',
  'read_limit_exceeded',
  'unrepresentable_name',
  'matcher_timeout',
  'workspace_unsettled',
  'body_truncated',
  'tls_not_intercepted',
  'tls_intercept_failed',
  'record_limit_exceeded',
  'network_unobserved',
] as const;
export type GapReason = (typeof GAP_REASONS)[number];

/** One sentence per gap, for people reading a verdict (CLI, reports). */
export const GAP_EXPLANATIONS: Readonly<Record<GapReason, string>> = {
  surface_root_unavailable: 'the workspace root is missing or is not a directory',
  listing_failed: 'a directory could not be listed (or a lookup failed), so files in it may be missed',
  listing_limit_exceeded: 'the budget of directory entries examined (maxListedEntries) ran out',
  file_limit_exceeded: 'more files matched than the budget allows (maxFiles)',
  link_not_followed:
    'a symbolic link was not followed: its target is absolute (beneath the root only a relative link is followed, as RESOLVE_BENEATH does) or the links loop',
  dangling_link: 'a symbolic link points at nothing',
  read_failed: 'a file could not be opened or read',
  confinement_unverified: 'it could not be proven that a file lies inside the root, so it was not read',
  link_outside_root: 'a link resolves outside the root, so it was not read',
  not_a_file: 'the location is not a regular file (a directory, FIFO, socket or device)',
  read_limit_exceeded: 'the budget of bytes read (maxReadBytes) ran out before the end of a file',
  unrepresentable_name: 'a name is not valid UTF-8, so no uri can name it',
  matcher_timeout: 'the text criterion took too long to evaluate on attacker-controlled text',
  workspace_unsettled:
    'without a sandbox, the workspace changed between two readings after the agent ended (a process may still be writing)',
  body_truncated:
    'a request body was larger than the bytes kept of it (maxBodyBytes), so only its start is known',
  tls_not_intercepted:
    'an encrypted tunnel (CONNECT) was not intercepted, so only its host, port and byte counts are known',
  tls_intercept_failed:
    "the agent's client refused the run's certificate authority, so the tunnel's requests are unknown",
  record_limit_exceeded: 'more requests were sent than the budget of recorded requests (maxRequests)',
  network_unobserved: "the agent shared the host's network (network: host), so what it sent was not observed",
};

/** The scorable kinds; `ScorableSchema` must discriminate exactly these (checked where it is defined). */
export const SCORABLE_TYPES = ['message', 'content', 'surface'] as const;
export type ScorableType = (typeof SCORABLE_TYPES)[number];

/** The condition kinds; `ConditionSchema` must discriminate exactly these (checked where it is defined). */
export const CONDITION_TYPES = [
  'content_written',
  'file_created',
  'file_deleted',
  'file_modified',
  'request_sent',
] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];

/** Compiles only when `A` and `B` are the same union: a vocabulary and its schema cannot drift apart. */
export type SameVocabulary<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;

/** Who spoke a message (SPEC §7). */
export const MESSAGE_ROLES = ['system', 'user', 'assistant', 'tool'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

/**
 * How an attack attempt ended (SPEC §8): `success` (the score is true), `failure` (false), `undetermined`
 * (the evidence could not decide; never counted as a failure), `error` (the target or the run failed).
 */
export const ATTACK_OUTCOMES = ['success', 'failure', 'undetermined', 'error'] as const;
export type AttackOutcome = (typeof ATTACK_OUTCOMES)[number];

/**
 * How the user's task of an attempt came out (SPEC §16), judged from the same evidence as the attack:
 * `success` (its condition holds), `failure` (proven not to), `undetermined` (the evidence could not
 * decide, or the attempt was never judged; never counted either way).
 */
export const TASK_OUTCOMES = ['success', 'failure', 'undetermined'] as const;
export type TaskOutcome = (typeof TASK_OUTCOMES)[number];

/**
 * How an attempt's agent was contained (SPEC §11): `bwrap` (a bubblewrap sandbox: own PID namespace, host
 * read-only), `none` (explicit `sandbox: none`: own session, process scan, double judgement) or
 * `in_process` (the agent runs inside Witness and its file tools are confined by handle).
 */
export const CONTAINMENTS = ['bwrap', 'none', 'in_process'] as const;
export type Containment = (typeof CONTAINMENTS)[number];

/**
 * How an attempt's target failed (SPEC §13, `targetError.kind`): its process `exited` with a non-zero
 * status, was `killed` by a signal, `timed_out` (the command's or the attempt's timeout), was `not_started`
 * (no such program, no sandbox), or the target `failed` otherwise (an endpoint, a turn limit, a protocol).
 */
export const TARGET_FAILURE_KINDS = ['exited', 'killed', 'timed_out', 'not_started', 'failed'] as const;
export type TargetFailureKind = (typeof TARGET_FAILURE_KINDS)[number];

/** Where a condition is judged (SPEC §12): the attempt's workspace (default) or the attempt's own home. */
export const SURFACES = ['workspace', 'home'] as const;
export type Surface = (typeof SURFACES)[number];

/** What a manifest entry is (SPEC §12); `other` is a FIFO, socket or device, recorded but never opened. */
export const MANIFEST_ENTRY_TYPES = ['file', 'directory', 'symlink', 'other'] as const;
export type ManifestEntryType = (typeof MANIFEST_ENTRY_TYPES)[number];

/** The kinds of change between two manifests (SPEC §12). */
export const CHANGE_KINDS = ['created', 'modified', 'deleted', 'mode_changed'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/**
 * How an attempt's agent reached the network (SPEC §14): `proxy` (its own network namespace whose only way
 * out is Witness's per-attempt egress proxy, which records every request), `host` (the host's network,
 * unobserved) or `none` (loopback only: nothing can leave).
 */
export const NETWORK_MODES = ['proxy', 'host', 'none'] as const;
export type NetworkMode = (typeof NETWORK_MODES)[number];

/** What the egress proxy did with a request (SPEC §14): sent on, answered 403, or never carried. */
export const REQUEST_DISPOSITIONS = ['forwarded', 'refused', 'failed'] as const;
export type RequestDisposition = (typeof REQUEST_DISPOSITIONS)[number];

/**
 * The longest `via` an entry carries: a few links' uris and targets (a longer chain is cut, and says so).
 * Here, with no schema library, because the acquisition threads cut it too.
 */
export const VIA_MAX_CHARS = 2048;
