import { expect } from 'vitest';
import { accessDeps } from '../../commands/access/accessDeps.ts';
import { addProjectMember } from '../../commands/access/addProjectMember.ts';
import { createPersonalApiKey } from '../../commands/access/createPersonalApiKey.ts';
import { createProject } from '../../commands/access/createProject.ts';
import { createRole } from '../../commands/access/createRole.ts';
import { ensureUser } from '../../commands/access/ensureUser.ts';
import { BOOTSTRAP_EMAIL } from '../../src/bootstrap.ts';
import type { TestService } from '../support/testService.ts';

export const MEMBER = 1;
export const ADMIN = 8;
export const VIEW = 21;
export const EDIT = 37;

let seq = 0;
const unique = (prefix: string) => `${prefix}-${process.pid}-${Date.now().toString(36)}-${++seq}`;

export const flagsPath = (projectId: number | string) =>
  `/api/projects/${projectId}/feature_flags/`;
export const flagPath = (projectId: number | string, flagId: number) =>
  `/api/projects/${projectId}/feature_flags/${flagId}/`;

/** The user the bootstrap created (owner of the default project, holder of the all-scopes key). */
export async function adminUserId(t: TestService): Promise<number> {
  return (await ensureUser(accessDeps(t.service.ctx), { email: BOOTSTRAP_EMAIL })).userId;
}

/** A new user, member of `projectId` at `level`, holding a key with `scopes`. */
export async function newUser(
  t: TestService,
  opts: {
    projectId?: number | null;
    level?: number;
    scopes?: string[];
    scopedProjectIds?: number[] | null;
    firstName?: string;
  } = {},
): Promise<{ userId: number; key: string; email: string }> {
  const email = `${unique('user')}@example.com`;
  const { userId } = await ensureUser(accessDeps(t.service.ctx), {
    email,
    firstName: opts.firstName ?? 'Test',
    lastName: 'User',
  });
  if (opts.projectId !== null) {
    await addProjectMember(accessDeps(t.service.ctx), {
      projectId: opts.projectId ?? t.projectId,
      userId,
      level: opts.level ?? MEMBER,
    });
  }
  const { personalApiKey } = await createPersonalApiKey(accessDeps(t.service.ctx), {
    userId,
    scopes: opts.scopes ?? ['feature_flag:write', 'activity_log:read'],
    scopedProjectIds: opts.scopedProjectIds ?? null,
  });
  return { userId, key: personalApiKey, email };
}

/** A fresh project owned by the bootstrap admin, so the default key sees it and lists start empty. */
export async function newProject(t: TestService, name = unique('project')): Promise<number> {
  const { projectId } = await createProject(accessDeps(t.service.ctx), {
    name,
    ownerUserId: await adminUserId(t),
  });
  return projectId;
}

export async function newRole(
  t: TestService,
  level: number,
  memberUserIds: number[],
): Promise<string> {
  const { roleId } = await createRole(accessDeps(t.service.ctx), {
    name: unique('role'),
    featureFlagsAccessLevel: level,
    memberUserIds,
    createdByUserId: await adminUserId(t),
  });
  return roleId;
}

/** POST a flag and insist on 201; returns the body. */
export async function createFlag(
  t: TestService,
  body: Record<string, unknown> = {},
  opts: { projectId?: number; key?: string | null } = {},
): Promise<any> {
  const res = await t.api(
    'POST',
    flagsPath(opts.projectId ?? t.projectId),
    { key: unique('flag'), ...body },
    opts.key,
  );
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** Absolute next/previous link → path for `api`, after checking it points at this server. */
export function linkPath(t: TestService, link: string): string {
  const url = new URL(link);
  expect(url.origin).toBe(new URL(t.url).origin);
  return `${url.pathname}${url.search}`;
}

/** Follows `next` links from `first` to the end; returns every page body. */
export async function followPages(
  t: TestService,
  first: string,
  key?: string | null,
): Promise<any[]> {
  const pages: any[] = [];
  let path: string | null = first;
  while (path) {
    const res = await t.api('GET', path, undefined, key);
    expect(res.status, res.text).toBe(200);
    pages.push(res.body);
    expect(pages.length).toBeLessThan(100);
    path = res.body.next ? linkPath(t, res.body.next) : null;
  }
  return pages;
}

export function expectError(
  res: { status: number; body: any; text: string },
  status: number,
  expected: { type?: string; code?: string; attr?: string | null } = {},
): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toEqual(
    expect.objectContaining({
      type: expected.type ?? expect.any(String),
      code: expected.code ?? expect.any(String),
      detail: expect.any(String),
    }),
  );
  expect(res.body.detail.length).toBeGreaterThan(0);
  if (expected.attr !== undefined) expect(res.body.attr).toBe(expected.attr);
}

export const expectValidation = (
  res: { status: number; body: any; text: string },
  attr: string | null,
  code?: string,
) => expectError(res, 400, { type: 'validation_error', attr, ...(code ? { code } : {}) });
