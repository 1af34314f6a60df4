import type { Event } from '../../../src/core/event.ts';
import {
  type FieldsResourceState,
  fieldsResourceEvolve,
  initialFieldsResourceState,
} from '../../shared/model/fieldsResource.ts';

/** How a step compares text, href or URL (PostHog's ACTION_STEP_MATCHING_OPTIONS). */
export const STEP_MATCHING = ['contains', 'regex', 'exact'] as const;
export type StepMatching = (typeof STEP_MATCHING)[number];

/**
 * One way an event can be the action (posthog/models/action: steps are OR-ed, the conditions of a
 * step AND-ed): its name; for `$autocapture`, the clicked element (selector, tag, text, href); the
 * page URL; property filters. Every field may be null (absent).
 */
export type ActionStep = {
  event: string | null;
  properties: Record<string, unknown>[] | null;
  selector: string | null;
  tag_name: string | null;
  text: string | null;
  text_matching: StepMatching | null;
  href: string | null;
  href_matching: StepMatching | null;
  url: string | null;
  url_matching: StepMatching | null;
};

export type ActionFields = {
  name: string;
  description: string;
  tags: string[];
  post_to_slack: boolean;
  slack_message_format: string;
  steps: ActionStep[];
  pinned_at: string | null;
};
export const actionFieldNames = [
  'name',
  'description',
  'tags',
  'post_to_slack',
  'slack_message_format',
  'steps',
  'pinned_at',
] as const satisfies readonly (keyof ActionFields)[];

export type ActionCreated = Event<
  'ActionCreated',
  {
    actionId: number;
    projectId: number;
    fields: ActionFields;
    createdAt: string;
    createdByUserId: number | null;
  }
>;
/** carries only the fields whose value changed */
export type ActionUpdated = Event<
  'ActionUpdated',
  { actionId: number; changes: Partial<ActionFields> }
>;
export type ActionSoftDeleted = Event<'ActionSoftDeleted', { actionId: number }>;
/** PATCH `deleted: false`: PostHog restores a soft-deleted action the same way */
export type ActionRestored = Event<'ActionRestored', { actionId: number }>;
export type ActionEvent = ActionCreated | ActionUpdated | ActionSoftDeleted | ActionRestored;

export const actionEventTypes = [
  'ActionCreated',
  'ActionUpdated',
  'ActionSoftDeleted',
  'ActionRestored',
] as const satisfies readonly ActionEvent['type'][];
export const actionStream = (actionId: number) => `action-${actionId}`;

export type ActionState = FieldsResourceState<ActionFields>;
export const initialActionState: () => ActionState = initialFieldsResourceState;
export const evolveAction: (state: ActionState, event: ActionEvent) => ActionState =
  fieldsResourceEvolve<'Action', ActionFields>('Action');
