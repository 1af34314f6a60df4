import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { accessReader } from '../../projections/access/accessReader.ts';
import { actionsReader } from '../../projections/actions/actionsReader.ts';
import { ActionParams } from '../../queries/actions/actionQueryRoutes.ts';
import { ActionView, actionViews } from '../../queries/actions/actionView.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, notFound } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { principalOf, projectOf } from '../../src/http/apiScope.ts';
import { hardDeleteRefused } from '../../src/http/hardDeleteRefused.ts';
import { notFoundUnlessIntegerIds } from '../../src/http/integerIds.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { requestMetadata } from '../../src/http/requestMetadata.ts';
import { actionDeps } from './actionDeps.ts';
import { createAction } from './createAction.ts';
import { type ActionStep, STEP_MATCHING } from './model/action.ts';
import { patchAction } from './patchAction.ts';

const text = (max: number) => z.string().max(max).nullable().optional();
const matching = z.enum(STEP_MATCHING).nullable().optional();
const isRegex = (pattern: string) => {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
};

/** PostHog's ActionStepJSONSerializer: every field optional and nullable. */
const StepInput = z
  .object({
    event: text(400),
    properties: z.array(z.record(z.string(), z.unknown())).max(100).nullable().optional(),
    selector: text(1000),
    tag_name: text(400),
    text: text(400),
    text_matching: matching,
    href: text(2048),
    href_matching: matching,
    url: text(2048),
    url_matching: matching,
  })
  .superRefine((step, ctx) => {
    for (const [field, how] of [
      ['text', step.text_matching],
      ['href', step.href_matching],
      ['url', step.url_matching],
    ] as const)
      if (how === 'regex' && typeof step[field] === 'string' && !isRegex(step[field]))
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `${field}: invalid regular expression`,
        });
  })
  .transform(
    (s): ActionStep => ({
      event: s.event ?? null,
      properties: s.properties ?? null,
      selector: s.selector ?? null,
      tag_name: s.tag_name ?? null,
      text: s.text ?? null,
      text_matching: s.text_matching ?? null,
      href: s.href ?? null,
      href_matching: s.href_matching ?? null,
      url: s.url ?? null,
      url_matching: s.url_matching ?? null,
    }),
  );

const Name = z
  .string()
  .max(400)
  .refine((n) => n.trim().length > 0, 'This field may not be blank.');
const writable = {
  description: z.string().max(10_000),
  tags: z.array(z.string().max(255)).max(100),
  post_to_slack: z.boolean(),
  slack_message_format: z.string().max(1200),
  steps: z.array(StepInput).max(100).describe('OR-ed: an event is the action if any step matches'),
  pinned_at: z
    .string()
    .nullable()
    .transform((v) => (v === '' ? null : v))
    .describe('any value pins (at the server clock), null or "" unpins'),
};
const CreateActionBody = z
  .object({
    name: Name,
    description: writable.description.default(''),
    tags: writable.tags.default([]),
    post_to_slack: writable.post_to_slack.default(false),
    slack_message_format: writable.slack_message_format.default(''),
    steps: writable.steps.default([]),
    pinned_at: writable.pinned_at.optional(),
  })
  .meta({ id: 'ActionCreate' });
const PatchActionBody = z
  .object({
    name: Name.optional(),
    description: writable.description.optional(),
    tags: writable.tags.optional(),
    post_to_slack: writable.post_to_slack.optional(),
    slack_message_format: writable.slack_message_format.optional(),
    steps: writable.steps.optional(),
    pinned_at: writable.pinned_at.optional(),
    deleted: z.boolean().optional().describe('true soft-deletes; false restores'),
  })
  .meta({ id: 'ActionPatch' });

/** Write side of actions: parse → handler → the action as the read model shows it. */
export const actionCommandRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.addHook('preValidation', notFoundUnlessIntegerIds(['id']));
    const deps = actionDeps(ctx);
    const actions = actionsReader(ctx.pool);
    const users = accessReader(ctx.pool);
    const prefix = '/api/projects/:project_id/actions';
    const tags = ['actions'];
    const write = { scope: 'action:write' };
    const view = async (request: FastifyRequest, actionId: number) => {
      const row = await actions.get(projectOf(request).id, actionId);
      if (!row) fail(notFound());
      return (await actionViews(users, [row]))[0]!;
    };

    app.post(
      `${prefix}/`,
      {
        config: write,
        schema: {
          tags,
          params: ProjectParams,
          body: CreateActionBody,
          response: { 201: ActionView, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { pinned_at, ...fields } = request.body;
        const { actionId } = await createAction(
          deps,
          {
            projectId: projectOf(request).id,
            userId: principalOf(request).user.id,
            fields: { ...fields, pinned_at: pinned_at ?? null },
          },
          requestMetadata(ctx, request),
        );
        return reply.status(201).send(await view(request, actionId));
      },
    );

    app.patch(
      `${prefix}/:id/`,
      {
        config: write,
        schema: {
          tags,
          params: ActionParams,
          body: PatchActionBody,
          response: { 200: ActionView, ...errorResponses },
        },
      },
      async (request) => {
        await patchAction(
          deps,
          { actionId: request.params.id, projectId: projectOf(request).id, changes: request.body },
          requestMetadata(ctx, request),
        );
        return view(request, request.params.id);
      },
    );

    hardDeleteRefused(app, `${prefix}/:id/`, {
      scope: write.scope,
      tags,
      params: ActionParams,
      description: 'hard deletes are refused, as PostHog: PATCH {"deleted": true} soft-deletes',
    });
  };
