/**
 * Messages between the main thread and the flag evaluation threads (evaluationThreads.ts ↔
 * evaluationWorker.ts). Structured clone: plain data only.
 */

import type {
  CohortPropertyGroup,
  EvaluableFlag,
  Needs,
} from '../../projections/featureFlags/evaluation/types.ts';
import type {
  FlagEvaluationRequest,
  StoredContext,
} from '../../projections/featureFlags/flagEvaluationService.ts';
import type { AnswerFormat, FlagMeta } from './decideResponse.ts';

/** A project's definitions at one version; sent before the first job that needs that version. */
export type DefinitionsMessage = {
  type: 'definitions';
  projectId: number;
  version: string;
  flags: readonly EvaluableFlag[];
  meta: readonly (readonly [string, FlagMeta])[];
  groupTypeMapping: Record<string, string>;
  cohorts: Record<string, CohortPropertyGroup>;
  staticCohortIds: readonly string[];
};

export type Job = {
  id: number;
  version: string;
  req: FlagEvaluationRequest;
  format: AnswerFormat;
  /** the main thread's clock (epoch ms): relative dates agree with the main thread's */
  nowMs: number;
  /**
   * The second pass of a job whose first pass needed stored data: the data the main thread
   * loaded for it (the same version and clock as the first pass).
   */
  stored?: StoredContext;
};

export type EvaluateMessage = { type: 'evaluate'; jobs: Job[] };

/**
 * The answer's JSON; or what stored data the flags need (`needs`: the main thread loads it and
 * sends the job again with it); or why the main thread must answer instead: the thread does not
 * hold that version of the definitions (`unknown`), or the evaluation threw (`failed`).
 */
export type Answer =
  | { id: number; json: string }
  | { id: number; needs: Needs }
  | { id: number; fallback: 'unknown' | 'failed' };

export type AnswersMessage = { type: 'answers'; answers: Answer[] };

export type WorkerData = {
  maxProjects: number;
  withOverridesStore: boolean;
  /** longest run of one job once the thread starts it (ms), inside the request's deadline */
  runMs: number;
};
