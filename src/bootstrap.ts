import { accessDeps } from '../commands/access/accessDeps.ts';
import { createPersonalApiKey } from '../commands/access/createPersonalApiKey.ts';
import { createProject } from '../commands/access/createProject.ts';
import { ensureUser } from '../commands/access/ensureUser.ts';
import type { AppContext } from './appContext.ts';

export const ALL_SCOPES = ['*'];
export const BOOTSTRAP_EMAIL = 'admin@hogstream.local';

export type BootstrapResult =
  | { created: false }
  | {
      created: true;
      projectId: number;
      projectApiKey: string;
      personalApiKey: string;
      generated: boolean;
    };

/**
 * On an empty data dir: "Default project", owned by a first user, with the INIT_* keys or freshly
 * generated ones (which the caller prints once: only their hashes are stored).
 */
export async function bootstrap(
  ctx: AppContext,
  init: { projectApiKey?: string | undefined; personalApiKey?: string | undefined },
): Promise<BootstrapResult> {
  const deps = accessDeps(ctx);
  if ((await deps.access.firstProjectId()) !== undefined) return { created: false };
  const { userId } = await ensureUser(deps, { email: BOOTSTRAP_EMAIL, firstName: 'Admin' });
  const project = await createProject(deps, {
    name: 'Default project',
    ownerUserId: userId,
    ...(init.projectApiKey ? { projectApiKey: init.projectApiKey } : {}),
  });
  const key = await createPersonalApiKey(deps, {
    userId,
    scopes: ALL_SCOPES,
    scopedProjectIds: null,
    label: 'bootstrap',
    ...(init.personalApiKey ? { rawKey: init.personalApiKey } : {}),
  });
  return {
    created: true,
    projectId: project.projectId,
    projectApiKey: project.projectApiKey,
    personalApiKey: key.personalApiKey,
    generated: !init.projectApiKey || !init.personalApiKey,
  };
}
