import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { personEventTypes } from '../../commands/persons/model/personEvents.ts';
import { capture as captureEvents, personByDistinctId, uniqueId } from '../support/personHttp.ts';
import { startTestService, type TestService } from '../support/testService.ts';

/**
 * PostHog's filtered person updates seen through REST, fed by real capture: a `$pageview` whose
 * only person changes are keys that change on every page (capture copies `$current_url`,
 * `$pathname`, `$browser`… into `$set`) leaves its person as it was; anything worth a write brings
 * them along. docs/DECISIONS.md "Person updates PostHog skips".
 */
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

/** One /batch/ request per call, so calls are ordered in the log. */
const capture = (event: string, distinctId: string, properties: Record<string, unknown>) =>
  captureEvents(t, { event, distinct_id: distinctId, properties });

async function propertiesOf(distinctId: string): Promise<Record<string, unknown>> {
  const [newest] = await t.service.ctx.store.readAll({
    direction: 'backwards',
    before: 'end',
    maxCount: 1,
    filter: { eventTypes: ['EventCaptured', ...personEventTypes] },
  });
  expect(await t.service.runners.get('persons')!.waitFor(newest!.position, 20_000)).toBe(true);
  const person = await personByDistinctId(t, distinctId);
  expect(person).not.toBeNull();
  return person.properties;
}

const page = (n: string) => ({
  $current_url: `https://shop.example/${n}`,
  $pathname: `/${n}`,
  $browser: n === 'a' ? 'Chrome' : 'Firefox',
});

/** A person created by a first `$pageview` of page a, with a custom key. */
async function visitor(): Promise<string> {
  const user = uniqueId('visitor');
  await capture('$pageview', user, { ...page('a'), $set: { plan: 'free' } });
  return user;
}

describe('person updates PostHog skips', () => {
  it('a first event creates the person with all its properties, page keys and $initial_* included', async () => {
    const user = await visitor();
    expect(await propertiesOf(user)).toMatchObject({
      plan: 'free',
      $current_url: 'https://shop.example/a',
      $pathname: '/a',
      $browser: 'Chrome',
      $initial_current_url: 'https://shop.example/a',
      $initial_browser: 'Chrome',
    });
  });

  it("a $pageview with a new $current_url leaves an existing person's page keys as they were", async () => {
    const user = await visitor();
    await capture('$pageview', user, page('b'));
    expect(await propertiesOf(user)).toMatchObject({
      $current_url: 'https://shop.example/a',
      $pathname: '/a',
      $browser: 'Chrome',
    });
  });

  it('a $pageview that also $sets a custom key writes both', async () => {
    const user = await visitor();
    await capture('$pageview', user, { ...page('b'), $set: { plan: 'pro' } });
    expect(await propertiesOf(user)).toMatchObject({
      plan: 'pro',
      $current_url: 'https://shop.example/b',
      $pathname: '/b',
      $browser: 'Firefox',
    });
  });

  it('$identify writes the filtered keys it carries', async () => {
    const user = await visitor();
    await capture('$identify', user, page('b'));
    expect(await propertiesOf(user)).toMatchObject({
      $current_url: 'https://shop.example/b',
      $browser: 'Firefox',
    });
  });

  it('a change of $geoip_country_name writes, and the filtered GeoIP keys with it', async () => {
    const user = await visitor();
    await capture('$pageview', user, {
      $set: { $geoip_country_name: 'United Kingdom', $geoip_postal_code: 'EC1' },
    });
    await capture('$pageview', user, { $set: { $geoip_postal_code: 'SW1' } });
    expect(await propertiesOf(user)).toMatchObject({
      $geoip_country_name: 'United Kingdom',
      $geoip_postal_code: 'EC1',
    });
    await capture('$pageview', user, {
      $set: { $geoip_country_name: 'France', $geoip_postal_code: '75001' },
    });
    expect(await propertiesOf(user)).toMatchObject({
      $geoip_country_name: 'France',
      $geoip_postal_code: '75001',
    });
  });
});
