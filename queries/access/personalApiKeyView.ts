import { z } from 'zod';
import type { PersonalApiKeyRecord } from '../../projections/access/accessReader.ts';

/**
 * A personal API key as PostHog's serializer shows it. `value` is the key itself only in the
 * answers of create and roll (never stored, so never shown again), null everywhere else.
 * `last_used_at` is always null: hogstream does not write on every authenticated request.
 * `scoped_organizations` is always empty: hogstream has no organizations.
 */
export const PersonalApiKeyView = z
  .object({
    id: z.string(),
    label: z.string(),
    value: z.string().nullable(),
    mask_value: z.string(),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
    user_id: z.number().int(),
    scopes: z.array(z.string()),
    scoped_teams: z.array(z.number().int()).nullable(),
    scoped_organizations: z.array(z.string()),
    last_rolled_at: z.string().nullable(),
  })
  .meta({ id: 'PersonalApiKey' });
export type PersonalApiKeyView = z.infer<typeof PersonalApiKeyView>;

export const toPersonalApiKeyView = (
  key: PersonalApiKeyRecord,
  value: string | null = null,
): PersonalApiKeyView => ({
  id: key.id,
  label: key.label,
  value,
  mask_value: key.mask_value,
  created_at: key.created_at.toISOString(),
  last_used_at: null,
  user_id: key.user_id,
  scopes: key.scopes,
  scoped_teams: key.scoped_project_ids,
  scoped_organizations: [],
  last_rolled_at: key.last_rolled_at?.toISOString() ?? null,
});

/**
 * The answer of reset_token: the project with its new API key. PostHog answers its whole project
 * object, whose `api_token` it can show at any time; hogstream keeps only the key's hash, so the
 * value is shown here once, like a new personal key's.
 */
export const ProjectTokenView = z
  .object({
    id: z.number().int(),
    name: z.string(),
    access_level: z.number().int(),
    api_token: z.string(),
  })
  .meta({ id: 'ProjectWithNewToken' });
