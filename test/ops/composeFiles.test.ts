import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { interpolateComposeFile, readEnvFile } from '../support/composeInterpolation.ts';

// What `docker compose config` / `up` would say about the compose files with the variables of
// .env.example (no Docker on this machine or CI): compose interpolates every service of every
// file it is given before it applies profiles, and one failed `${VAR:?…}` stops it.

const ENV_EXAMPLE = '.env.example';
const BASE = 'docker-compose.yml';
const DEV = 'docker-compose.dev.yml';
const TLS = 'docker-compose.tls.yml';

/** The variables .env.example marks `# required:` (the comment line right above them). */
function requiredInEnvExample(): string[] {
  const lines = readFileSync(ENV_EXAMPLE, 'utf8').split('\n');
  return lines
    .filter((line, i) => /^[A-Z_]+=/.test(line) && /^#\s*required:/.test(lines[i - 1] ?? ''))
    .map((line) => line.slice(0, line.indexOf('=')))
    .sort();
}

/** .env.example after the user did what it says: every required value set. */
function envAsInstructed(): Record<string, string> {
  const env = readEnvFile(ENV_EXAMPLE);
  for (const name of requiredInEnvExample()) env[name] = `${name.toLowerCase()}-value`;
  return env;
}

function missingIn(errors: string[]): string[] {
  return errors.map((e) => /required variable (\w+)/.exec(e)?.[1] ?? e).sort();
}

type Services = { services: Record<string, Record<string, unknown>> };

describe('compose files interpolated with .env.example', () => {
  it('.env.example marks the passwords required, and nothing else', () => {
    expect(requiredInEnvExample()).toEqual(['CLICKHOUSE_PASSWORD', 'POSTGRES_PASSWORD']);
  });

  it('the main file requires exactly what .env.example marks required (DOMAIN is not)', () => {
    const shipped = interpolateComposeFile(BASE, readEnvFile(ENV_EXAMPLE));
    expect(missingIn(shipped.errors)).toEqual(requiredInEnvExample());
    expect(shipped.errors.join('\n')).toMatch(/set POSTGRES_PASSWORD in \.env/);
  });

  it('the main file and the dev override interpolate once the required values are set', () => {
    const env = envAsInstructed();
    for (const file of [BASE, DEV]) {
      const result = interpolateComposeFile(file, env);
      expect(result.errors, file).toEqual([]);
      // Every variable the file reads is listed in .env.example (compose would warn otherwise).
      expect(result.unset, file).toEqual([]);
    }
    const base = interpolateComposeFile(BASE, env).config as Services;
    const app = base.services.app as { environment: Record<string, string>; ports: string[] };
    expect(app.environment.DATABASE_URL).toBe(
      'postgres://hogstream:postgres_password-value@postgres:5432/hogstream',
    );
    expect(app.environment.LOG_LEVEL).toBe('info');
    expect(app.ports).toEqual(['127.0.0.1:8000:8000']);
    // The dev override only adds ports to services the main file defines.
    const dev = interpolateComposeFile(DEV, env).config as Services;
    for (const name of Object.keys(dev.services)) expect(base.services, name).toHaveProperty(name);
  });

  it('the TLS file interpolates with DOMAIN set, and names DOMAIN when it is not', () => {
    const env = { ...envAsInstructed(), DOMAIN: 'analytics.example.com' };
    const tls = interpolateComposeFile(TLS, env);
    expect(tls.errors).toEqual([]);
    expect(tls.unset).toEqual([]);
    const caddy = (tls.config as Services).services.caddy as {
      environment: Record<string, string>;
      depends_on: Record<string, unknown>;
    };
    expect(caddy.environment.DOMAIN).toBe('analytics.example.com');
    // It sits on top of the main file: the service it proxies to is defined there.
    const base = interpolateComposeFile(BASE, env).config as Services;
    for (const name of Object.keys(caddy.depends_on)) expect(base.services).toHaveProperty(name);

    const withoutDomain = interpolateComposeFile(TLS, envAsInstructed());
    expect(missingIn(withoutDomain.errors)).toEqual(['DOMAIN']);
    expect(withoutDomain.errors[0]).toMatch(/set DOMAIN in \.env/);
  });
});

describe('the interpolation rules the test relies on', () => {
  it('follows compose: defaults, errors, replacements, $$ and nesting', () => {
    const result = interpolateComposeFile('test/fixtures/composeInterpolation.yml', {
      SET: 'v',
      EMPTY: '',
    });
    expect(result.config).toEqual({
      a: 'v-v-d1--d3-vx',
      b: 'r1--r3-',
      c: '$SET costs $5 and $ 1',
      d: '',
      n: 3,
    });
    expect(result.errors).toEqual([
      'd: required variable UNSET is missing a value: unset',
      'd: required variable EMPTY is missing a value: empty',
    ]);
    expect(result.unset).toEqual([]);
  });
});
