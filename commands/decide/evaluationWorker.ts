/**
 * A flag evaluation thread: /decide's pure passes and the answer's JSON, for the jobs the main
 * thread sends in batches. A first pass (the request's properties only) that needs stored data
 * answers what it needs; the main thread, which owns the database connections, loads it and sends
 * the job again with it for the complete pass.
 */
import { parentPort, workerData } from 'node:worker_threads';
import {
  completedContext,
  mergeNeeds,
  requestContext,
  settle,
} from '../../projections/featureFlags/flagEvaluationService.ts';
import { evaluateFlags } from '../featureFlags/model/evaluation/evaluateFlags.ts';
import { answerJson, type FlagMeta } from './decideResponse.ts';
import type {
  Answer,
  AnswersMessage,
  DefinitionsMessage,
  EvaluateMessage,
  Job,
  WorkerData,
} from './evaluationProtocol.ts';

const CHUNK = 4;
const { maxProjects, withOverridesStore } = (workerData as { data: WorkerData }).data;
type Held = Omit<DefinitionsMessage, 'type' | 'meta' | 'staticCohortIds'> & {
  meta: ReadonlyMap<string, FlagMeta>;
  staticCohortIds: ReadonlySet<string>;
};
/** projectId → its definitions, least recently used first (bounded like the main cache) */
const projects = new Map<number, Held>();

function hold(m: DefinitionsMessage) {
  projects.delete(m.projectId);
  projects.set(m.projectId, {
    ...m,
    meta: new Map(m.meta),
    staticCohortIds: new Set(m.staticCohortIds),
  });
  if (projects.size > maxProjects) projects.delete(projects.keys().next().value!);
}

function answer(job: Job): Answer {
  try {
    return evaluate(job);
  } catch {
    // The main thread evaluates it again and answers (errors included) as it always does.
    return { id: job.id, fallback: 'failed' };
  }
}

function evaluate(job: Job): Answer {
  const project = projects.get(job.req.projectId);
  if (!project || project.version !== job.version) return { id: job.id, fallback: 'unknown' };
  const now = new Date(job.nowMs);
  const base = requestContext(job.req, project, withOverridesStore);
  const evaluations = evaluateFlags(
    project.flags,
    job.stored ? completedContext(base, job.req, job.stored) : base,
    { now: () => now, ...(job.req.keys ? { keys: job.req.keys } : {}) },
  );
  // A complete pass leaves nothing to load: settle makes anything undecided an error.
  const needs = job.stored ? undefined : mergeNeeds(evaluations);
  if (needs) return { id: job.id, needs };
  return {
    id: job.id,
    json: answerJson(job.format, { ...settle(evaluations), meta: project.meta }),
  };
}

parentPort!.on('message', (m: DefinitionsMessage | EvaluateMessage) => {
  if (m.type === 'definitions') return hold(m);
  // Answers go back in small groups, so the main thread writes the first while later ones are
  // still being evaluated (one message per batch left both threads idle in turn).
  for (let from = 0; from < m.jobs.length; from += CHUNK) {
    const answers = m.jobs.slice(from, from + CHUNK).map(answer);
    parentPort!.postMessage({ type: 'answers', answers } satisfies AnswersMessage);
  }
});
