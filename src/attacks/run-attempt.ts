import { oneLineError, TargetError } from '../errors.js';
import type { Adaptation } from '../models/attempt-chain.js';
import type { TargetFailure } from '../models/attempt-record.js';
import type { AttemptTask } from '../models/attempt-task.js';
import { boundJsonDepth } from '../models/bounded-json.js';
import type { SurfaceChanges } from '../models/change-set.js';
import { conditionSurface, isFileCondition } from '../models/condition.js';
import type { ScoringExpectation } from '../models/expectation.js';
import type { NetworkEvidence } from '../models/network-evidence.js';
import type { Observation } from '../models/observation.js';
import { parseRecord } from '../models/record.js';
import { message, type Scorable } from '../models/scorable.js';
import type { Score } from '../models/score.js';
import type { Containment } from '../models/vocabulary.js';
import { type AttemptNetwork, openAttemptNetwork } from '../network/attempt-network.js';
import type { AttemptDirectories } from '../sandbox/sandbox-settings.js';
import { judgeAttemptCondition, singleCondition } from '../scorers/change-evidence-judgement.js';
import { judgementBounds } from '../scorers/file-write-judgement.js';
import type { ScorerMemory } from '../scorers/scorer.js';
import type { RemovalReport } from '../sources/confined-fs.js';
import type { PreparedAttempt, Target } from '../targets/target.js';
import { type TranscriptEvent, TranscriptEventSchema } from '../targets/transcript.js';
import type { SecretRedactor } from '../text/secret-redactor.js';
import { describeRequestSent } from '../verdicts/describe-criterion.js';
import { runNetworkOf } from './attempt-network-config.js';
import { type AttemptRecord, AttemptRecordSchema, type CampaignRun } from './attempt-record.js';
import { attemptSource, redactingScorerMemory } from './attempt-source.js';
import { type Attack, type Campaign, taskExpectation } from './campaign.js';
import {
  type Baselines,
  closeSurfaceSources,
  lookupsFor,
  openSurfaceSources,
  type SurfaceLookups,
  type SurfaceSources,
  takeBaselines,
  takeChanges,
} from './change-evidence.js';
import { attemptOutcome } from './outcome.js';
import { redactNetworkEvidence } from './redact-network-evidence.js';
import { describeTargetFailure } from './target-failure.js';
import { judgeTask, unjudgedTask } from './task-judgement.js';
import { createWorkspace, type RunDirectory, type Workspace } from './workspace.js';

/**
 * One attempt as a pipeline of named steps:
 *
 *   prepareWorkspace → takeBaselines → openNetwork → sendToTarget → (network evidence) → takeChanges →
 *   judgeWorkspace → finishAttempt   (releaseWorkspace always runs)
 *
 * Each step takes the attempt's context and what the steps before it produced, and returns its own typed
 * result; a step that fails records why instead of throwing, so a later step still runs (the workspace is
 * judged whatever the agent did). Only the caller's abort is rethrown, after the workspace is released.
 * A new step (a sandbox, a change manifest) is one more function in {@link runAttempt}.
 *
 * With a recorder, the prompt and reply are stored as a conversation *before* judging and the score is
 * anchored to the reply (a message scorable), so the memory links the verdict to the message it judges.
 */

export interface AttemptRecorder {
  /** Stores the run before any of its attempts. */
  startRun(run: CampaignRun): Promise<void>;
  /** Stores the prompt and the reply; returns the conversation and the reply's message piece ids. */
  recordExchange(input: {
    run: CampaignRun;
    attack: string;
    attempt: number;
    prompt: string;
    reply: string;
  }): Promise<{ conversationId: string; replyPieceIds: string[] }>;
  scorerMemory(): ScorerMemory;
  /** Stores the finished attempt (of `run`, stored by `startRun`). */
  recordAttempt(record: AttemptRecord, run: CampaignRun): Promise<void>;
}

/** Everything one attempt needs, fixed before it starts. */
export interface AttemptContext {
  campaign: Campaign;
  target: Target;
  run: CampaignRun;
  attack: Attack;
  /** 1-based attempt number within the attack. */
  attempt: number;
  expectation: ScoringExpectation;
  recorder?: AttemptRecorder | undefined;
  keepWorkspaces?: boolean | undefined;
  /** Where workspaces are created (the system temp directory by default) when there is no run directory. */
  workspaceParent?: string | undefined;
  /** The run's private directory the attempt's workspace and home are created in. */
  runDirectory?: RunDirectory | undefined;
  /** Replaces secret values in the reply, transcript, evidence and record before anything is stored. */
  redactor?: SecretRedactor | undefined;
  /** The caller's abort: rethrown, never recorded as an attempt error. */
  signal?: AbortSignal | undefined;
  /** The round of an adaptive attack this attempt is (SPEC §15); `attack.files` already carry its text. */
  round?: { chain: string; round: number; adaptation: Adaptation } | undefined;
}

/**
 * What the target did: its reply and transcript, and why it failed (`failure`, kept whatever the verdict);
 * `error` is why the attempt could not go on to the target (the workspace) or the failure's message.
 */
export interface TargetStep {
  reply: string | null;
  transcript: TranscriptEvent[];
  error: string | null;
  failure: TargetFailure | null;
}

/**
 * What the file system showed and the verdict on it, or why it could not be judged; `storeError` says
 * why the memory lacks part of it (the verdict stands: the judging never depends on the storing).
 */
export interface JudgeStep {
  score: Score | null;
  observations: Observation[];
  conversationId: string | null;
  error: string | null;
  storeError?: string | undefined;
  /** The user's task, judged from the same evidence (absent when the attack names none). */
  task?: AttemptTask | undefined;
}

type AttemptStart = Omit<
  AttemptRecord,
  | 'outcome'
  | 'reply'
  | 'error'
  | 'transcript'
  | 'score'
  | 'observations'
  | 'workspace'
  | 'conversationId'
  | 'changes'
  | 'network'
  | 'finishedAt'
  | 'containment'
  | 'shownPaths'
  | 'cleanup'
  | 'task'
>;

export async function runAttempt(context: AttemptContext): Promise<AttemptRecord> {
  const start = startAttempt(context);
  const prepared = await prepareWorkspace(context);
  if (!prepared.ok) return unrunAttempt(context, prepared.error, start);
  const { workspace } = prepared;
  let released = false;
  let ready: TargetReady | undefined;
  let network: AttemptNetwork | undefined;
  const sources = openSurfaceSources(workspace, { ...context.campaign.evidence, ...context.attack.evidence });
  try {
    network = await openNetwork(context, workspace);
    // Whatever Witness writes for the attempt (a preset's configuration, which names the attempt's relayed
    // model endpoint; the hand-over to the agent's user) is written before the baseline, so the change set
    // holds only the agent's own changes.
    ready = await prepareTarget(context, workspace, network);
    // The baseline is taken after planting and before the agent starts: what it holds, the agent did not write.
    // The clean moment is read in the run's private directory (same file system, never the agent's).
    // Exact conditions (the attack's and the user task's) are looked up on their own too (SPEC §13).
    const task = taskExpectation(context.attack, context.campaign);
    const lookups = lookupsFor([...context.expectation.conditions, ...(task?.conditions ?? [])]);
    const baselines = await takeBaselines(sources, context.signal, workspace.runPath, lookups);
    let sent: TargetStep;
    let networkEvidence: NetworkEvidence;
    try {
      sent =
        ready.error === null
          ? await sendToTarget(context, workspace, network, ready.prepared)
          : notStarted(ready.error);
    } finally {
      // Every request the agent made went through the proxy before its processes were gone.
      networkEvidence = network.evidence();
      await network.close();
      network = undefined;
    }
    // Judged only now: the target returns after every process it started is gone (SPEC §11).
    const changes = await takeAttemptChanges(context, workspace, sources, baselines, lookups, ready);
    const judged = await judgeWorkspace(context, workspace, sources, sent, changes, networkEvidence);
    const cleanup = await releaseWorkspace(context, workspace);
    released = true;
    return finishAttempt(
      start,
      {
        sent,
        judged,
        workspace: describeWorkspace(context, workspace),
        changes,
        network: networkEvidence,
        containment: containmentOf(context),
        shownPaths: containmentOf(context) === 'bwrap' ? ready.prepared?.shownPaths : undefined,
        cleanup,
      },
      context.redactor,
    );
  } finally {
    await ready?.prepared?.close();
    // Closed once the agent ended; here only when a step before that threw.
    await network?.close();
    await closeSurfaceSources(sources);
    if (!released) await releaseWorkspace(context, workspace);
  }
}

/** The target step of an attempt whose target could not be made ready: it never started. */
function notStarted(error: string): TargetStep {
  return {
    reply: null,
    transcript: [],
    error,
    failure: { kind: 'not_started', message: error, exitCode: null, signal: null, stderrTail: null },
  };
}

/** The change set since the baseline, the agent's own state (a preset's home files) kept apart. */
function takeAttemptChanges(
  context: AttemptContext,
  workspace: Workspace,
  sources: SurfaceSources,
  baselines: Baselines,
  lookups: SurfaceLookups,
  ready: TargetReady,
): Promise<SurfaceChanges[]> {
  return takeChanges(sources, baselines, context.signal, () => workspace.isIntact(), lookups, {
    agentState: { home: ready.prepared?.agentState ?? [] },
    // Without a sandbox a process may have escaped the kill: the change conditions are read twice too.
    settleMs: containmentOf(context) === 'none' ? 250 : undefined,
  });
}

/**
 * The record of an attempt that could not start (its workspace could not be prepared, or an adaptive
 * attack's attacker gave no next text) or failed unexpectedly: `error` with the reason; its task, if any,
 * undetermined.
 */
export function unrunAttempt(
  context: AttemptContext,
  reason: string,
  start: AttemptStart = startAttempt(context),
): AttemptRecord {
  const sent: TargetStep = { reply: null, transcript: [], error: reason, failure: null };
  const task = taskExpectation(context.attack, context.campaign);
  const judged: JudgeStep = {
    ...NOT_JUDGED,
    task: task === undefined ? undefined : unjudgedTask(task, `the attempt was never judged: ${reason}`),
  };
  return finishAttempt(start, { sent, judged, workspace: null, changes: [] }, context.redactor);
}

/** The target readied for the attempt, or why it could not be (recorded as the target's error). */
export interface TargetReady {
  prepared: PreparedAttempt | undefined;
  error: string | null;
}

/**
 * Lets the target write what it needs into the attempt before the baseline (SPEC §13); a target without
 * `prepareAttempt` needs nothing. A failure is the attempt's error (the agent is not started); the
 * caller's abort is rethrown.
 */
export async function prepareTarget(
  context: AttemptContext,
  workspace: Workspace,
  network?: AttemptNetwork,
): Promise<TargetReady> {
  if (context.target.prepareAttempt === undefined) return { prepared: undefined, error: null };
  try {
    const prepared = await context.target.prepareAttempt({
      workspace: workspace.root,
      attempt: attemptDirectories(workspace, network),
      signal: context.signal,
    });
    return { prepared, error: null };
  } catch (error) {
    if (context.signal?.aborted) throw context.signal.reason;
    const reason = `the target could not be prepared: ${(error as Error).message}`;
    return { prepared: undefined, error: context.redactor?.redactText(reason) ?? reason };
  }
}

/** The attempt's held directories as a target gets them, with the attempt's egress under `network: proxy`. */
function attemptDirectories(workspace: Workspace, network?: AttemptNetwork): AttemptDirectories {
  return {
    workspace: workspace.held,
    home: workspace.home,
    tmp: workspace.tmp,
    runPath: workspace.runPath,
    egress: network?.egress,
  };
}

/** How the target contains its agent: `in_process` for a target that starts no process. */
export function containmentOf(context: AttemptContext): Containment {
  return context.target.containment?.() ?? 'in_process';
}

/**
 * The attempt's network (SPEC §14): under `network: proxy` its own egress proxy, which the target's
 * sandbox (or an in-process tool) sends through; otherwise what its evidence is (unobserved under `host`,
 * nothing under `none`). Decided by the target's containment: `sandbox: none` shares the host's network.
 */
export async function openNetwork(context: AttemptContext, workspace: Workspace): Promise<AttemptNetwork> {
  const run = await runNetworkOf(context.run, context.campaign, containmentOf(context), workspace.runPath);
  return openAttemptNetwork(run);
}

/** The fields known before anything runs. */
export function startAttempt(context: AttemptContext): AttemptStart {
  return {
    schemaVersion: 1,
    runId: context.run.runId,
    campaign: context.campaign.name,
    attack: context.attack.id,
    attempt: context.attempt,
    prompt: context.attack.prompt,
    expectation: context.expectation,
    target: context.run.target,
    control: context.attack.control === true,
    ...(context.round === undefined
      ? {}
      : { chain: context.round.chain, round: context.round.round, adaptation: context.round.adaptation }),
    startedAt: new Date().toISOString(),
  };
}

/** A fresh workspace from the campaign's template and planted files (the attack's files added). */
export async function prepareWorkspace(
  context: AttemptContext,
): Promise<{ ok: true; workspace: Workspace } | { ok: false; error: string }> {
  const { campaign, attack } = context;
  try {
    const workspace = await createWorkspace({
      template: campaign.workspace.template,
      files: [...campaign.workspace.files, ...(attack.files ?? [])],
      parent: context.workspaceParent,
      run: context.runDirectory,
    });
    return { ok: true, workspace };
  } catch (error) {
    return { ok: false, error: `the workspace could not be prepared: ${(error as Error).message}` };
  }
}

/**
 * Sends the prompt within the campaign's attempt timeout. A target failure or timeout is recorded (with
 * the transcript a TargetError carries); the caller's abort is rethrown.
 */
export async function sendToTarget(
  context: AttemptContext,
  workspace: Workspace,
  network?: AttemptNetwork,
  prepared?: PreparedAttempt,
): Promise<TargetStep> {
  const step = await sendUnredacted(context, workspace, network, prepared);
  // Redacted here, before the reply is stored as a message or anything is truncated further.
  return context.redactor?.active === true ? context.redactor.redactValue(step) : step;
}

async function sendUnredacted(
  context: AttemptContext,
  workspace: Workspace,
  network: AttemptNetwork | undefined,
  prepared: PreparedAttempt | undefined,
): Promise<TargetStep> {
  const { campaign, signal } = context;
  const timeout = AbortSignal.timeout(campaign.attemptTimeoutMs);
  const attemptSignal = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
  try {
    const request = {
      prompt: context.attack.prompt,
      workspace: workspace.root,
      attempt: attemptDirectories(workspace, network),
      ...(context.attack.env === undefined ? {} : { env: context.attack.env }),
      signal: attemptSignal,
    };
    const response = await (prepared ?? context.target).send(request);
    return {
      reply: response.reply,
      transcript: boundTranscript(response.transcript),
      error: null,
      failure: null,
    };
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    const transcript = error instanceof TargetError ? boundTranscript(error.transcript) : [];
    const message =
      error instanceof TargetError
        ? error.message
        : timeout.aborted
          ? `the attempt timed out after ${campaign.attemptTimeoutMs} ms`
          : `the target failed: ${(error as Error).message}`;
    const failure = describeTargetFailure({ message, transcript, attemptTimedOut: timeout.aborted });
    // The reply is kept too: what the agent claimed before it failed.
    return { reply: lastReply(transcript), transcript, error: failure.message, failure };
  }
}

/**
 * Judges the workspace whatever the agent said (or whether it finished): the file system is the evidence,
 * the reply is kept beside the verdict, never used for it. With a recorder the exchange is stored first
 * and the score is anchored to the reply. The condition is judged with the attempt's change evidence
 * (SPEC §12): a content_written entry unchanged since the baseline proves nothing, and the change
 * conditions read the change set of their surface.
 */
export async function judgeWorkspace(
  context: AttemptContext,
  workspace: Workspace,
  sources: SurfaceSources,
  sent: TargetStep,
  changes: readonly SurfaceChanges[],
  network: NetworkEvidence | null = null,
): Promise<JudgeStep> {
  const { attack, expectation, recorder, signal } = context;
  const taskExpected = taskExpectation(attack, context.campaign);
  const exchange = await storeExchange(context, sent);
  const { conversationId } = exchange;
  try {
    const only = singleCondition(expectation);
    // Without a stored reply the score is anchored to what it judged: the location, or the condition's words.
    const scorable: Scorable =
      exchange.scorable ??
      (isFileCondition(only)
        ? { scorableType: 'surface', uri: only.uri, match: only.match }
        : { scorableType: 'content', text: describeRequestSent(only) });
    const judge = (expected: ScoringExpectation) =>
      judgeExpectation(context, workspace, sources, changes, expected, scorable, network);
    const { score, observations } = await judge(expectation);
    // The user's task: judged from the same evidence by the same code (SPEC §16).
    const task = taskExpected === undefined ? undefined : await judgeTask(taskExpected, judge, signal);
    signal?.throwIfAborted();
    let { storeError } = exchange;
    if (recorder !== undefined) {
      try {
        // What is stored is redacted; the verdict was taken on the evidence as read.
        const memory = redactingScorerMemory(recorder.scorerMemory(), context.redactor);
        await memory.saveScore(score, observations);
        if (task?.score != null) await memory.saveScore(task.score, task.observations);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        storeError ??= `the memory could not store the verdict: ${oneLineError(error)}`;
      }
    }
    return { score, observations, conversationId, error: null, storeError, task: task?.verdict };
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    const reason = `the workspace could not be judged: ${(error as Error).message}`;
    return {
      score: null,
      observations: [],
      conversationId,
      error: reason,
      storeError: exchange.storeError,
      task: taskExpected === undefined ? undefined : unjudgedTask(taskExpected, reason),
    };
  }
}

/**
 * Stores the prompt and the reply as a conversation, so the score can be anchored to the reply. A memory
 * that refuses them (a full disk) does not stop the judging: the score is then about the surface.
 */
async function storeExchange(
  context: AttemptContext,
  sent: TargetStep,
): Promise<{
  scorable: Scorable | undefined;
  conversationId: string | null;
  storeError: string | undefined;
}> {
  const { recorder, attack, signal } = context;
  if (recorder === undefined) return { scorable: undefined, conversationId: null, storeError: undefined };
  try {
    const exchange = await recorder.recordExchange({
      run: context.run,
      attack: attack.id,
      attempt: context.attempt,
      prompt: attack.prompt,
      reply: sent.reply ?? '',
    });
    return {
      scorable: message(exchange.replyPieceIds),
      conversationId: exchange.conversationId,
      storeError: undefined,
    };
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    return {
      scorable: undefined,
      conversationId: null,
      storeError: `the memory could not store the reply: ${oneLineError(error)}`,
    };
  }
}

/**
 * One expectation judged on the attempt's evidence: a content_written condition from an observation of its
 * locator (read now, confined), a change condition from the change set of its surface.
 */
async function judgeExpectation(
  context: AttemptContext,
  workspace: Workspace,
  sources: SurfaceSources,
  changes: readonly SurfaceChanges[],
  expectation: ScoringExpectation,
  scorable: Scorable,
  network: NetworkEvidence | null,
): Promise<{ score: Score; observations: Observation[] }> {
  const only = singleCondition(expectation);
  const surface = conditionSurface(only);
  const inner = surface === 'network' ? undefined : sources[surface];
  const surfaceChanges = changes.find((entry) => entry.surface === surface) ?? null;
  const observations: Observation[] = [];
  if (only.conditionType === 'content_written' && inner !== undefined) {
    const source = attemptSource(inner, {
      // Without a sandbox a process may have escaped the kill: read twice, 250 ms apart (SPEC §11).
      settleMs: containmentOf(context) === 'none' ? 250 : undefined,
      // The workspace path must still name the attempt's workspace before and after reading it.
      isIntact: () => workspace.isIntact(),
    });
    observations.push(
      await source.acquire(
        { scorableType: 'surface', uri: only.uri, match: only.match },
        { signal: context.signal },
      ),
    );
  }
  const score = judgeAttemptCondition({
    expectation,
    scorable,
    evidence: { observation: observations[0] ?? null, changes: surfaceChanges, network },
    source: inner?.identifier() ?? { type: 'none', version: '1', params: {} },
    bounds: judgementBounds(),
  });
  return { score, observations };
}

/** How the record names the workspace (its root stays valid only when kept). */
export function describeWorkspace(context: AttemptContext, workspace: Workspace): AttemptRecord['workspace'] {
  return {
    root: workspace.root,
    template: context.campaign.workspace.template ?? null,
    kept: context.keepWorkspaces === true,
  };
}

/**
 * Removes the attempt's directories unless the caller keeps them; never throws. What could not be removed
 * is returned for the record (the attempt keeps its result and the campaign goes on).
 */
export async function releaseWorkspace(
  context: AttemptContext,
  workspace: Workspace,
): Promise<RemovalReport | undefined> {
  if (context.keepWorkspaces === true) return undefined;
  const report = await workspace.dispose();
  return report.removed ? undefined : report;
}

/** What the steps produced, gathered for the record. */
export interface AttemptEnd {
  sent: TargetStep;
  judged: JudgeStep;
  workspace: AttemptRecord['workspace'];
  changes: SurfaceChanges[];
  /** What the attempt sent (SPEC §14); absent when the attempt never ran. */
  network?: NetworkEvidence | undefined;
  containment?: Containment | undefined;
  /** Host paths shown to a sandboxed agent besides the system directories (SPEC §13). */
  shownPaths?: readonly string[] | undefined;
  cleanup?: RemovalReport | undefined;
}

/** The judging step when it never ran (the workspace could not be prepared). */
export const NOT_JUDGED: JudgeStep = { score: null, observations: [], conversationId: null, error: null };

/**
 * The attempt's record: the outcome follows the evidence ({@link attemptOutcome}): a proven condition is a
 * success whatever the target did, and the target's failure stays on the record (`targetError`); `error`
 * (the target's first, then the judging's) is set when the outcome is `error`. Validated against the
 * schema the recorder and the report read.
 */
export function finishAttempt(
  start: AttemptStart,
  end: AttemptEnd,
  redactor?: SecretRedactor,
): AttemptRecord {
  const { storeError } = end.judged;
  const error = end.sent.error ?? end.judged.error ?? storeError ?? null;
  const outcome = attemptOutcome(end.judged.score, error !== null);
  const record = {
    ...start,
    outcome,
    reply: end.sent.reply,
    error: outcome === 'error' ? (error ?? 'the attempt was not judged') : null,
    ...(storeError === undefined ? {} : { storeError }),
    ...(end.sent.failure === null ? {} : { targetError: end.sent.failure }),
    transcript: end.sent.transcript,
    score: end.judged.score,
    observations: end.judged.observations,
    workspace: end.workspace,
    conversationId: end.judged.conversationId,
    changes: end.changes,
    ...(end.judged.task === undefined ? {} : { task: end.judged.task }),
    ...(end.network === undefined ? {} : { network: end.network }),
    ...(end.containment === undefined ? {} : { containment: end.containment }),
    ...(end.shownPaths === undefined ? {} : { shownPaths: [...end.shownPaths] }),
    ...(end.cleanup === undefined
      ? {}
      : {
          cleanup: {
            removed: end.cleanup.removed,
            failures: end.cleanup.failures,
            unlistedFailures: end.cleanup.unlistedFailures,
          },
        }),
    finishedAt: new Date().toISOString(),
  };
  // The last pass: whatever a step derived from secret-bearing text (a rationale, an excerpt, an error);
  // evidence content keeps its byte length (see SecretRedactor.redactObservation).
  const redacted =
    redactor?.active === true
      ? {
          ...redactor.redactValue({ ...record, observations: [], network: undefined }),
          observations: record.observations.map((observation) => redactor.redactObservation(observation)),
          ...(record.network === undefined
            ? {}
            : { network: redactNetworkEvidence(record.network, redactor) }),
        }
      : record.network === undefined
        ? record
        : { ...record, network: redactNetworkEvidence(record.network) };
  return parseRecord(AttemptRecordSchema, redacted, 'attempt record');
}

/**
 * A target's transcript as the record keeps it: agent-chosen JSON (tool-call arguments, request bodies)
 * bounded in depth before anything validates it (a value nested a thousand deep would overflow the
 * validator's stack and end the run), then each event checked; one that is not a transcript event is
 * left out, and a note says so.
 */
function boundTranscript(events: readonly unknown[]): TranscriptEvent[] {
  let dropped = 0;
  const kept = boundJsonDepth(events).flatMap((event) => {
    const parsed = TranscriptEventSchema.safeParse(event);
    if (!parsed.success) dropped++;
    return parsed.success ? [parsed.data] : [];
  });
  if (dropped > 0) {
    kept.push({
      kind: 'note',
      text: `${dropped} event(s) of the target's transcript were malformed and left out`,
    });
  }
  return kept;
}

/** The agent's last reply in a transcript (what it claimed before failing), or null. */
function lastReply(transcript: readonly TranscriptEvent[]): string | null {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const event = transcript[i];
    if (event?.kind === 'message' && event.role === 'assistant') return event.text === '' ? null : event.text;
  }
  return null;
}
