import { z } from 'zod';
import { STEP_MATCHING } from '../../commands/actions/model/action.ts';
import type { UserRecord } from '../../projections/access/accessReader.ts';
import type { ActionRow } from '../../projections/actions/actionsReader.ts';
import { toUserView, UserView } from '../featureFlags/flagView.ts';

const matching = z.enum(STEP_MATCHING).nullable();
export const ActionStepView = z
  .object({
    event: z.string().nullable(),
    properties: z.array(z.record(z.string(), z.unknown())).nullable(),
    selector: z.string().nullable(),
    tag_name: z.string().nullable(),
    text: z.string().nullable(),
    text_matching: matching,
    href: z.string().nullable(),
    href_matching: matching,
    url: z.string().nullable(),
    url_matching: matching,
  })
  .meta({ id: 'ActionStep' });

/** PostHog's action shape (posthog/api/action.py's serializer). */
export const ActionView = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    tags: z.array(z.string()),
    post_to_slack: z.boolean(),
    slack_message_format: z.string(),
    steps: z.array(ActionStepView),
    created_at: z.string(),
    created_by: UserView.nullable(),
    deleted: z.boolean(),
    is_calculating: z.boolean().describe('always false: actions are matched when queried'),
    last_calculated_at: z.string().describe('when the definition last changed'),
    team_id: z.number().int(),
    is_action: z.literal(true),
    bytecode_error: z.null(),
    pinned_at: z.string().nullable(),
    creation_context: z.null(),
  })
  .meta({ id: 'Action' });
export type ActionView = z.infer<typeof ActionView>;

export const toActionView = (row: ActionRow, creator: UserRecord | undefined): ActionView => ({
  id: row.id,
  name: row.name,
  description: row.description,
  tags: row.tags,
  post_to_slack: row.post_to_slack,
  slack_message_format: row.slack_message_format,
  steps: row.steps,
  created_at: new Date(row.created_at).toISOString(),
  created_by: creator ? toUserView(creator) : null,
  deleted: row.deleted,
  is_calculating: false,
  last_calculated_at: new Date(row.updated_at).toISOString(),
  team_id: row.project_id,
  is_action: true,
  bytecode_error: null,
  pinned_at: row.pinned_at ? new Date(row.pinned_at).toISOString() : null,
  creation_context: null,
});

/** The views of a page of rows, their creators read once. */
export async function actionViews(
  users: { usersById(ids: readonly number[]): Promise<Map<number, UserRecord>> },
  rows: readonly ActionRow[],
): Promise<ActionView[]> {
  const ids = [
    ...new Set(rows.map((r) => r.created_by_user_id).filter((id): id is number => id !== null)),
  ];
  const creators = await users.usersById(ids);
  return rows.map((r) =>
    toActionView(r, r.created_by_user_id === null ? undefined : creators.get(r.created_by_user_id)),
  );
}
