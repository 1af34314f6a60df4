import type { Worker } from 'node:worker_threads';
import type { Needs } from '../../projections/featureFlags/evaluation/types.ts';
import type { ProjectFlags } from '../../projections/featureFlags/flagDefinitions.ts';
import type {
  FlagEvaluationRequest,
  StoredContext,
} from '../../projections/featureFlags/flagEvaluationService.ts';
import { startWorker } from '../../src/runtime/workerThread.ts';
import type { AnswerFormat, FlagMeta } from './decideResponse.ts';
import type {
  AnswersMessage,
  DefinitionsMessage,
  EvaluateMessage,
  Job,
  WorkerData,
} from './evaluationProtocol.ts';

/**
 * A first pass that needs stored data: the main thread loads what `needs` says and asks again
 * with it (`answer`'s `second`), at the same clock.
 */
export type NeedsStored = { needs: Needs; nowMs: number };

/** Why a job was refused: every thread's queue is full (503), or the project's share is (429). */
export type Refusal = { refused: 'threads_full' | 'project_full' };

/**
 * /decide's evaluation threads: the pure passes and the answer's JSON run on worker threads, so
 * the main thread only parses HTTP, checks the token, loads stored data and writes answers
 * (bench:decide: the evaluation of 50 flags costs more than the rest of the request). Jobs are
 * sent in one message per event-loop turn and thread; a thread runs them round-robin by project
 * (evaluationWorker.ts), so one project's heavy requests delay another's by one job at most.
 * `answer` resolves to the JSON, to `NeedsStored` when a flag needs stored data, to a `Refusal`
 * when the queues are full (bounded: the main thread never takes the work over, it must stay
 * free for /_health and capture), or to null when the main thread must answer itself: a thread
 * is down or does not hold the definitions, or the evaluation threw.
 */
export type EvaluationThreads = {
  answer(
    project: ProjectFlags,
    req: FlagEvaluationRequest,
    format: AnswerFormat,
    second?: { stored: StoredContext; nowMs: number },
  ): Promise<string | NeedsStored | Refusal | null>;
  /**
   * answers given by the threads (of them, `withStoredData` after a load), requests handed
   * back to the main thread, and requests refused because the queues were full
   */
  counts(): { onThreads: number; withStoredData: number; onMainThread: number; refused: number };
  close(): Promise<void>;
};

export type EvaluationThreadsOptions = {
  threads: number;
  maxProjects: number;
  withOverridesStore: boolean;
  now: () => Date;
  /** jobs a thread may hold (running or queued); past it new requests are refused (503) */
  maxInFlight?: number;
  /** jobs one project may hold on all threads together; past it its requests are refused (429) */
  maxPerProject?: number;
  /** longest run of one job on a thread (ms), inside the request's deadline (default 250) */
  runMs?: number;
  /** a thread that died is started again after this long */
  restartDelayMs?: number;
  onError?: (error: unknown) => void;
};

type Pending = {
  resolve: (answer: string | NeedsStored | null) => void;
  nowMs: number;
  second: boolean;
  projectId: number;
};
type Thread = {
  worker: Worker | null;
  /** projectId → the definitions version the thread holds (as far as this side knows) */
  sent: Map<number, string>;
  pending: Map<number, Pending>;
  queue: (DefinitionsMessage | Job)[];
};

// The rows of liveFlags carry the stream revision v4's metadata shows (see decideRoutes.ts).
const metaOf = (project: ProjectFlags): DefinitionsMessage['meta'] =>
  project.rows.map((r) => {
    const { id, name, revision } = r as unknown as FlagMeta;
    return [r.key, { id, name, revision }];
  });

export function evaluationThreads(options: EvaluationThreadsOptions): EvaluationThreads {
  const maxInFlight = options.maxInFlight ?? 256;
  const maxPerProject = options.maxPerProject ?? 128;
  /** projectId → its jobs on every thread (a first pass and its second count once each) */
  const perProject = new Map<number, number>();
  const release = (projectId: number) => {
    const left = (perProject.get(projectId) ?? 1) - 1;
    if (left > 0) perProject.set(projectId, left);
    else perProject.delete(projectId);
  };
  const data: WorkerData = {
    maxProjects: options.maxProjects,
    withOverridesStore: options.withOverridesStore,
    runMs: options.runMs ?? 250,
  };
  const entry = new URL(
    `./evaluationWorker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
    import.meta.url,
  );
  let closed = false;
  let nextId = 1;
  let flushing = false;
  const counted = { onThreads: 0, withStoredData: 0, onMainThread: 0, refused: 0 };

  const threads: Thread[] = Array.from({ length: options.threads }, () => ({
    worker: null,
    sent: new Map(),
    pending: new Map(),
    queue: [],
  }));

  function start(t: Thread) {
    const worker = startWorker(entry, data);
    worker.unref();
    worker.on('message', (m: AnswersMessage) => {
      for (const a of m.answers) {
        const pending = t.pending.get(a.id);
        t.pending.delete(a.id);
        if (!pending) continue;
        release(pending.projectId);
        if ('json' in a) {
          counted.onThreads++;
          if (pending.second) counted.withStoredData++;
          pending.resolve(a.json);
        } else if ('needs' in a) {
          pending.resolve({ needs: a.needs, nowMs: pending.nowMs });
        } else {
          counted.onMainThread++;
          if (a.fallback === 'unknown') t.sent.clear();
          pending.resolve(null);
        }
      }
    });
    const down = (error?: unknown) => {
      if (t.worker !== worker) return;
      if (error) options.onError?.(error);
      t.worker = null;
      t.sent.clear();
      for (const pending of t.pending.values()) {
        release(pending.projectId);
        pending.resolve(null);
      }
      t.pending.clear();
      t.queue = [];
      if (!closed) setTimeout(() => !closed && start(t), options.restartDelayMs ?? 1_000).unref();
    };
    worker.on('error', down);
    worker.on('exit', () => down());
    t.worker = worker;
  }
  for (const t of threads) start(t);

  function flush() {
    flushing = false;
    for (const t of threads) {
      if (t.queue.length === 0 || !t.worker) continue;
      const jobs: Job[] = [];
      for (const item of t.queue) {
        if ('type' in item) {
          if (jobs.length > 0) t.worker.postMessage({ type: 'evaluate', jobs: jobs.splice(0) });
          t.worker.postMessage(item);
        } else jobs.push(item);
      }
      if (jobs.length > 0)
        t.worker.postMessage({ type: 'evaluate', jobs } satisfies EvaluateMessage);
      t.queue = [];
    }
  }

  return {
    answer(project, req, format, second) {
      let best: Thread | undefined;
      for (const t of threads)
        if (t.worker && (!best || t.pending.size < best.pending.size)) best = t;
      if (!best) {
        counted.onMainThread++;
        return Promise.resolve(null);
      }
      // A second pass was admitted with its first: it is never refused half-way.
      const refusal: Refusal['refused'] | undefined = second
        ? undefined
        : (perProject.get(project.projectId) ?? 0) >= maxPerProject
          ? 'project_full'
          : best.pending.size >= maxInFlight
            ? 'threads_full'
            : undefined;
      if (refusal) {
        counted.refused++;
        return Promise.resolve({ refused: refusal });
      }
      const t = best;
      if (t.sent.get(project.projectId) !== project.version) {
        t.sent.delete(project.projectId);
        t.sent.set(project.projectId, project.version);
        if (t.sent.size > options.maxProjects) t.sent.delete(t.sent.keys().next().value!);
        t.queue.push({
          type: 'definitions',
          projectId: project.projectId,
          version: project.version,
          flags: project.flags,
          meta: metaOf(project),
          groupTypeMapping: project.groupTypeMapping,
          cohorts: project.cohorts,
          staticCohortIds: [...project.staticCohortIds],
        });
      }
      const id = nextId++;
      const nowMs = second?.nowMs ?? options.now().getTime();
      t.queue.push({
        id,
        version: project.version,
        req,
        format,
        nowMs,
        ...(second ? { stored: second.stored } : {}),
      });
      if (!flushing) {
        flushing = true;
        setImmediate(flush);
      }
      perProject.set(project.projectId, (perProject.get(project.projectId) ?? 0) + 1);
      return new Promise((resolve) =>
        t.pending.set(id, { resolve, nowMs, second: !!second, projectId: project.projectId }),
      );
    },
    counts: () => ({ ...counted }),
    async close() {
      closed = true;
      await Promise.all(threads.map((t) => t.worker?.terminate()));
    },
  };
}
