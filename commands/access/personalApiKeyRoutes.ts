import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  PersonalApiKeyView,
  toPersonalApiKeyView,
} from '../../queries/access/personalApiKeyView.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, forbidden, notFound } from '../../src/core/errors.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import { hasScope } from '../../src/core/principal.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { principalOf } from '../../src/http/apiScope.ts';
import { accessDeps } from './accessDeps.ts';
import { createOwnPersonalApiKey } from './createOwnPersonalApiKey.ts';
import { deletePersonalApiKey } from './deletePersonalApiKey.ts';
import { MAX_PERSONAL_API_KEYS_PER_USER } from './personalApiKeyGrants.ts';
import { rollPersonalApiKey } from './rollPersonalApiKey.ts';
import { updatePersonalApiKey } from './updatePersonalApiKey.ts';

const READ = 'personal_api_key:read';
const WRITE = 'personal_api_key:write';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const label = z.string().trim().min(1).max(40).describe("the key's name (PostHog: 40 characters)");
const scopes = z
  .array(z.string().max(100))
  .min(1)
  .max(300)
  .describe('`<object>:read`, `<object>:write`, or `*`');
const scopedTeams = z
  .array(
    z
      .number()
      .int()
      .min(1)
      .max(2 ** 31 - 1),
  )
  .max(1000)
  .nullable()
  .describe("the projects the key is limited to; empty or null: all of the holder's projects");
// PostHog's organizations: hogstream has none, so only an empty list is accepted.
const scopedOrganizations = z
  .array(z.string())
  .max(0, 'hogstream has no organizations: leave scoped_organizations empty')
  .optional();

const CreateKeyBody = z
  .object({
    label,
    scopes,
    scoped_teams: scopedTeams.optional(),
    scoped_organizations: scopedOrganizations,
  })
  .meta({ id: 'PersonalApiKeyCreate' });
const PatchKeyBody = z
  .object({
    label: label.optional(),
    scopes: scopes.optional(),
    scoped_teams: scopedTeams.optional(),
    scoped_organizations: scopedOrganizations,
  })
  .meta({ id: 'PersonalApiKeyPatch' });
const KeyParams = z.object({
  id: z.string().max(100).describe('personal API key id (a UUID), or `@current`: the key used'),
});
const ListQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(100)
    .describe('most keys answered (1–100); PostHog answers every key, at most ten a user'),
});

/** `[]` and null both mean "every project of the holder", as in PostHog. */
const projectsOf = (teams: number[] | null | undefined) =>
  teams === undefined ? undefined : teams === null || teams.length === 0 ? null : teams;

/** `@current` is the key used; a word that is no key id names no key (404, as PostHog). */
function keyIdOf(request: FastifyRequest, id: string): string {
  if (id === '@current') return principalOf(request).keyId;
  return UUID.test(id) ? id.toLowerCase() : fail(notFound('Personal API key not found.'));
}

/**
 * /api/personal_api_keys/: the calling user's keys (PostHog's paths and shapes). PostHog takes a
 * logged-in session for everything but reading the key used; hogstream has only keys, so a key
 * with `personal_api_key:read`/`:write` (or `*`) manages its holder's keys (docs/DECISIONS.md).
 */
export const personalApiKeyRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const deps = accessDeps(ctx);
    const prefix = '/api/personal_api_keys';
    const metadataOf = (request: FastifyRequest): EventMetadata => ({
      userId: principalOf(request).user.id,
      apiKeyId: principalOf(request).keyId,
      correlationId: request.id,
      occurredAt: ctx.now().toISOString(),
    });
    const granterOf = async (request: FastifyRequest) => {
      const principal = principalOf(request);
      const reachable = await deps.access.visibleProjects(principal);
      return {
        userId: principal.user.id,
        scopes: principal.scopes,
        scopedProjectIds: principal.scopedProjectIds,
        reachableProjectIds: reachable.map((p) => p.id),
      };
    };
    const keyView = async (request: FastifyRequest, keyId: string, value: string | null = null) => {
      const key = await deps.access.personalKeyOf(principalOf(request).user.id, keyId);
      return key ? toPersonalApiKeyView(key, value) : fail(notFound('Personal API key not found.'));
    };

    app.get(
      `${prefix}/`,
      {
        config: { scope: READ },
        schema: {
          tags: ['personal_api_keys'],
          querystring: ListQuery,
          response: { 200: z.array(PersonalApiKeyView), ...errorResponses },
        },
      },
      async (request) =>
        (await deps.access.personalKeysOf(principalOf(request).user.id, request.query.limit)).map(
          (k) => toPersonalApiKeyView(k),
        ),
    );

    app.post(
      `${prefix}/`,
      {
        config: { scope: WRITE },
        schema: {
          tags: ['personal_api_keys'],
          description: `A key of the calling user (at most ${MAX_PERSONAL_API_KEYS_PER_USER}); \`value\` is shown only here.`,
          body: CreateKeyBody,
          response: { 201: PersonalApiKeyView, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { keyId, personalApiKey } = await createOwnPersonalApiKey(
          deps,
          await granterOf(request),
          {
            label: request.body.label,
            scopes: request.body.scopes,
            scopedProjectIds: projectsOf(request.body.scoped_teams) ?? null,
          },
          metadataOf(request),
        );
        return reply.status(201).send(await keyView(request, keyId, personalApiKey));
      },
    );

    // PostHog lets any key read itself (`@current`); another of the user's keys needs the scope.
    app.get(
      `${prefix}/:id/`,
      {
        schema: {
          tags: ['personal_api_keys'],
          params: KeyParams,
          response: { 200: PersonalApiKeyView, ...errorResponses },
        },
      },
      async (request) => {
        const keyId = keyIdOf(request, request.params.id);
        if (keyId !== principalOf(request).keyId && !hasScope(principalOf(request).scopes, READ))
          fail(forbidden(`API key missing required scope '${READ}'`));
        return keyView(request, keyId);
      },
    );

    app.patch(
      `${prefix}/:id/`,
      {
        config: { scope: WRITE },
        schema: {
          tags: ['personal_api_keys'],
          params: KeyParams,
          body: PatchKeyBody,
          response: { 200: PersonalApiKeyView, ...errorResponses },
        },
      },
      async (request) => {
        const keyId = keyIdOf(request, request.params.id);
        const { label, scopes, scoped_teams } = request.body;
        const projects = projectsOf(scoped_teams);
        await updatePersonalApiKey(
          deps,
          await granterOf(request),
          keyId,
          {
            ...(label !== undefined ? { label } : {}),
            ...(scopes !== undefined ? { scopes } : {}),
            ...(projects !== undefined ? { scopedProjectIds: projects } : {}),
          },
          metadataOf(request),
        );
        return keyView(request, keyId);
      },
    );

    app.post(
      `${prefix}/:id/roll/`,
      {
        config: { scope: WRITE },
        schema: {
          tags: ['personal_api_keys'],
          description: 'A new value for the key, shown only here; the old one is refused at once.',
          params: KeyParams,
          response: { 200: PersonalApiKeyView, ...errorResponses },
        },
      },
      async (request) => {
        const keyId = keyIdOf(request, request.params.id);
        const { personalApiKey } = await rollPersonalApiKey(
          deps,
          principalOf(request).user.id,
          keyId,
          metadataOf(request),
        );
        return keyView(request, keyId, personalApiKey);
      },
    );

    app.delete(
      `${prefix}/:id/`,
      {
        config: { scope: WRITE },
        schema: {
          tags: ['personal_api_keys'],
          description: 'Revokes the key: the next request with it is refused.',
          params: KeyParams,
          response: { 204: z.null().describe('revoked'), ...errorResponses },
        },
      },
      async (request, reply) => {
        const keyId = keyIdOf(request, request.params.id);
        await deletePersonalApiKey(deps, principalOf(request).user.id, keyId, metadataOf(request));
        return reply.status(204).send(null);
      },
    );
  };
