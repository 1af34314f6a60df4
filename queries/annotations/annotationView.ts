import { z } from 'zod';
import { ANNOTATION_SCOPES, CREATION_TYPES } from '../../commands/annotations/model/annotation.ts';
import type { UserRecord } from '../../projections/access/accessReader.ts';
import type { AnnotationRow } from '../../projections/annotations/annotationsReader.ts';
import type { InsightRow } from '../../projections/insights/insightsReader.ts';
import { toUserView, UserView } from '../featureFlags/flagView.ts';

/** PostHog's annotation shape (posthog/api/annotation.py's serializer). */
export const AnnotationView = z
  .object({
    id: z.number().int(),
    content: z.string().nullable(),
    date_marker: z.string().nullable(),
    creation_type: z.enum(CREATION_TYPES),
    dashboard_item: z.number().int().nullable().describe('the insight id of an insight annotation'),
    dashboard_id: z.number().int().nullable(),
    dashboard_name: z.string().nullable(),
    insight_short_id: z.string().nullable().describe('the `dashboard_item` insight’s short id'),
    insight_name: z.string().nullable(),
    insight_derived_name: z
      .string()
      .nullable()
      .describe('always null, as saved insights answer `derived_name`'),
    created_by: UserView.nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    deleted: z.boolean(),
    scope: z.enum(ANNOTATION_SCOPES),
    recording_id: z.null().describe("PostHog's deprecated recording scope: always null"),
    is_emoji: z.boolean(),
  })
  .meta({ id: 'Annotation' });
export type AnnotationView = z.infer<typeof AnnotationView>;

export const toAnnotationView = (
  row: AnnotationRow,
  creator: UserRecord | undefined,
  dashboardName: string | null,
  insight?: Pick<InsightRow, 'short_id' | 'name'>,
): AnnotationView => ({
  id: row.id,
  content: row.content,
  date_marker: row.date_marker ? new Date(row.date_marker).toISOString() : null,
  creation_type: row.creation_type,
  dashboard_item: row.dashboard_item,
  dashboard_id: row.dashboard_id,
  dashboard_name: dashboardName,
  insight_short_id: insight?.short_id ?? null,
  insight_name: insight?.name ?? null,
  insight_derived_name: null,
  created_by: creator ? toUserView(creator) : null,
  created_at: new Date(row.created_at).toISOString(),
  updated_at: new Date(row.updated_at).toISOString(),
  deleted: row.deleted,
  scope: row.scope,
  recording_id: null,
  is_emoji: row.is_emoji,
});
