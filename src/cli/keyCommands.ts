import { accessDeps, accessMetadata } from '../../commands/access/accessDeps.ts';
import { deletePersonalApiKey } from '../../commands/access/deletePersonalApiKey.ts';
import { resetProjectApiKey } from '../../commands/access/resetProjectApiKey.ts';
import { rollPersonalApiKey } from '../../commands/access/rollPersonalApiKey.ts';
import { toPersonalApiKeyView } from '../../queries/access/personalApiKeyView.ts';
import type { AppContext } from '../appContext.ts';
import { DomainFailure } from '../core/errors.ts';
import { NotFound, UsageError } from './errors.ts';
import type { Options } from './usage.ts';

type Answer = { json: unknown; text: string };

/** The most keys `personal-key list` prints: PostHog allows ten a user. */
const LIST_LIMIT = 1_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A key id as `list` prints it, or a usage error. */
function keyId(arg: string | undefined): string {
  if (!arg) throw new UsageError('missing the key id (see: personal-key list)');
  if (!UUID.test(arg)) throw new UsageError(`"${arg}" is not a key id (see: personal-key list)`);
  return arg.toLowerCase();
}

/** A missing key is the handler's not_found failure: said as such, exit 1. */
async function orNotFound<T>(run: () => Promise<T>, what: string): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof DomainFailure && error.error.kind === 'not_found')
      throw new NotFound(`${what} does not exist`);
    throw error;
  }
}

/**
 * `personal-key list | roll | revoke` and `project reset-token`: the remedies for a lost or leaked
 * key. The operator at the CLI acts on any user's key; the events carry no user (the CLI has
 * none), which is how the log tells them from a holder's own changes through the API.
 */
export async function keyCommand(
  ctx: AppContext,
  noun: string,
  verb: string | undefined,
  arg: string | undefined,
  o: Options,
): Promise<Answer> {
  const deps = accessDeps(ctx);
  const metadata = accessMetadata(ctx.now());
  if (noun === 'personal-key' && verb === 'list') {
    const userId = o.user ? await deps.access.userIdByEmail(o.user) : undefined;
    if (o.user && userId === undefined) throw new NotFound(`no user with e-mail ${o.user}`);
    const keys = await deps.access.allPersonalKeys(LIST_LIMIT, userId);
    const json = keys.map((k) => ({ ...toPersonalApiKeyView(k), user_email: k.email }));
    const text =
      keys.length === 0
        ? 'no personal API keys'
        : keys
            .map(
              (k) =>
                `${k.id}  ${k.mask_value}  ${k.email}  "${k.label}"  ${k.scopes.join(',')}  projects: ${k.scoped_project_ids?.join(',') ?? 'all'}  created ${k.created_at.toISOString()}${k.last_rolled_at ? `  rolled ${k.last_rolled_at.toISOString()}` : ''}`,
            )
            .join('\n');
    return { json, text };
  }
  if (noun === 'personal-key' && verb === 'roll') {
    const id = keyId(arg);
    const { personalApiKey } = await orNotFound(
      () => rollPersonalApiKey(deps, null, id, metadata),
      `personal API key ${id}`,
    );
    return {
      json: { id, personal_api_key: personalApiKey },
      text: `personal API key ${id} rolled (the old value is refused from now on): ${personalApiKey}`,
    };
  }
  if (noun === 'personal-key' && verb === 'revoke') {
    const id = keyId(arg);
    await orNotFound(
      () => deletePersonalApiKey(deps, null, id, metadata),
      `personal API key ${id}`,
    );
    return { json: { id, revoked: true }, text: `personal API key ${id} revoked` };
  }
  if (noun === 'project' && verb === 'reset-token') {
    if (!arg || !/^\d{1,9}$/.test(arg)) throw new UsageError('the project id must be an integer');
    const projectId = Number(arg);
    // A server's caches learn of the reset from the log (projections/access/projectKeyResets.ts).
    const { projectApiKey } = await orNotFound(
      () =>
        resetProjectApiKey(
          { ...deps, forgetCachedProjectKeys: () => {} },
          projectId,
          null,
          accessMetadata(ctx.now(), undefined, projectId),
        ),
      `project ${projectId}`,
    );
    return {
      json: { project_id: projectId, project_api_key: projectApiKey },
      text: `project ${projectId}: new project API key (the old one is refused from now on): ${projectApiKey}`,
    };
  }
  throw new UsageError(`unknown command "${[noun, verb].filter(Boolean).join(' ')}"`);
}
