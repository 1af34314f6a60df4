import { accessDeps } from '../../commands/access/accessDeps.ts';
import { createProject } from '../../commands/access/createProject.ts';
import { ensureUser } from '../../commands/access/ensureUser.ts';
import {
  type CaptureDeps,
  captureDeps,
  captureEvents,
} from '../../commands/capture/captureEvents.ts';
import type { EventCapturedData } from '../../commands/capture/model/eventCaptured.ts';
import { openGeoIp } from '../../ingress/geoip.ts';
import type { CaptureError } from '../../ingress/ingressErrors.ts';
import type { RawCaptureRequest } from '../../ingress/requestContext.ts';
import { clientIp } from '../../ingress/requestContext.ts';
import { BOOTSTRAP_EMAIL } from '../../src/bootstrap.ts';
import { httpError } from '../../src/http/apiError.ts';
import { startTestService, type TestService } from './testService.ts';

/**
 * The production capture use case (`captureEvents` with the deps `captureDeps` builds: the access
 * read model for tokens, the group committer over the log, GeoIP) on a test service's embedded
 * Postgres, called the way captureRoutes.ts calls it, without HTTP in between: tests state whole
 * requests (GET bodies, odd headers, any bytes) and see the answer the route would give and the
 * events the log now holds.
 */
export type CaptureAnswer =
  | {
      status: 200 | 204;
      /** the EventCaptured data this request appended, in log order */
      stored: EventCapturedData[];
    }
  | { status: 400 | 401 | 403 | 413; failure: CaptureError; bodyText: string };

export type CaptureUseCase = Readonly<{
  capture(request: RawCaptureRequest): Promise<CaptureAnswer>;
  /** a new project owning `projectApiKey`; its id */
  addProject(projectApiKey: string): Promise<number>;
  close(): Promise<void>;
}>;

/** The socket address when a request names no X-Forwarded-For (TEST-NET-3: no GeoIP record). */
const SOCKET_IP = '203.0.113.7';

/**
 * A test service with one project per key of `projectKeys`; captures receive at `now` (the
 * service itself keeps the real clock).
 */
export async function startCaptureUseCase(
  projectKeys: readonly string[],
  now: Date,
): Promise<CaptureUseCase> {
  // Capture needs the log and the access read model only: no ClickHouse, no flag threads.
  const t: TestService = await startTestService(
    { FLAG_EVALUATION_THREADS: '0' },
    { clickhouse: false },
  );
  try {
    const access = accessDeps(t.service.ctx);
    const owner = (await ensureUser(access, { email: BOOTSTRAP_EMAIL })).userId;
    const addProject = async (projectApiKey: string) =>
      (await createProject(access, { name: projectApiKey, ownerUserId: owner, projectApiKey }))
        .projectId;
    for (const key of projectKeys) await addProject(key);
    const deps: CaptureDeps = {
      ...captureDeps(t.service.ctx, await openGeoIp()),
      now: () => now,
    };
    const { store } = t.service.ctx;
    return {
      addProject,
      async capture(request) {
        const head = await store.headPosition();
        const outcome = await captureEvents(deps, request, clientIp(request.headers, SOCKET_IP));
        if (!outcome.ok) {
          const { status, body } = httpError(outcome.error);
          return {
            status: status as 400 | 401 | 403 | 413,
            failure: outcome.error,
            bodyText: JSON.stringify(body),
          };
        }
        const appended = await store.readAll({
          after: head < 0n ? 'start' : head,
          filter: { eventTypes: ['EventCaptured'] },
        });
        return {
          status: outcome.status,
          stored: appended.map((e) => e.data as EventCapturedData),
        };
      },
      close: () => t.close(),
    };
  } catch (error) {
    await t.close();
    throw error;
  }
}

/** The stored events of an accepted request; throws with the answer otherwise. */
export const storedEvents = (answer: CaptureAnswer): EventCapturedData[] => {
  if (!('stored' in answer))
    throw new Error(`expected success, got ${answer.status} ${answer.bodyText}`);
  return answer.stored;
};
