/**
 * bench/decide's peer: unleash-server 8.2.0 on an embedded Postgres of its own, each in its own
 * process (../shared/reference/unleash-peer.md), seeded with the 50 toggles equivalent to our flags
 * and asked `GET /api/frontend` (all toggles evaluated for one user) with the frontend token.
 */
import { personOf, unleashToggles } from './decideFixtures.ts';
import { type Req, type Target, targetOn } from './decideReport.ts';
import { installUnleash } from './installUnleash.ts';
import type { Started } from './processes.ts';

export async function unleashTarget(deps: {
  start: (entry: string, env: Record<string, string>) => Promise<Started>;
  log: (line: string) => void;
  cleanups: (() => Promise<void>)[];
}): Promise<Target[]> {
  const { start, log, cleanups } = deps;
  const dir = await installUnleash(log);
  const secret = 'benchsecret0123456789';
  const tokens = {
    ADMIN_TOKEN: `*:*.${secret}`,
    CLIENT_TOKEN: `*:development.${secret}`,
    FRONTEND_TOKEN: `*:development.${secret}f`,
  };
  const pg = await start('bench/support/peerPostgres.ts', {});
  const pgPort = new URL(pg.url.replace('postgres://', 'http://')).port;
  const peer = await start('bench/support/unleashPeer.ts', {
    UNLEASH_DIR: dir,
    PG_PORT: pgPort,
    ...tokens,
  });
  cleanups.push(async () => {
    await peer.stop();
    await pg.stop();
  });
  log('unleash: seeding the equivalent 50 toggles');
  const admin = (method: string, p: string, body?: unknown) =>
    fetch(`${peer.url}${p}`, {
      method,
      headers: { authorization: tokens.ADMIN_TOKEN, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).then(async (r) => {
      if (!r.ok && r.status !== 409)
        throw new Error(`${method} ${p}: ${r.status} ${await r.text()}`);
    });
  for (const name of ['email', 'country'])
    await admin('POST', '/api/admin/context', { name, stickiness: false });
  const features = '/api/admin/projects/default/features';
  for (const t of unleashToggles()) {
    await admin('POST', features, { name: t.name, type: 'release' });
    await admin('POST', `${features}/${t.name}/environments/development/strategies`, t.strategy);
    await admin('POST', `${features}/${t.name}/environments/development/on`);
  }
  const frontend = (i: number): Req => {
    const p = personOf(i);
    const q = new URLSearchParams({ userId: p.id, email: p.email, country: p.country });
    return {
      method: 'GET',
      path: `/api/frontend?${q}`,
      headers: { authorization: tokens.FRONTEND_TOKEN },
    };
  };
  const probe = await fetch(`${peer.url}${frontend(7).path}`, { headers: frontend(7).headers });
  const toggles = ((await probe.json()) as { toggles?: unknown[] }).toggles;
  if (!probe.ok || !Array.isArray(toggles) || toggles.length === 0)
    throw new Error(`unleash /api/frontend answered ${probe.status}`);
  return [targetOn(peer, 'unleash', 'unleash /api/frontend', frontend)];
}
