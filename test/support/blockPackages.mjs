// `node --import tsx --import ./test/support/blockPackages.mjs …` with BLOCK_PACKAGES=a,b: those
// packages cannot be loaded, by import or require, as after `npm ci --omit=optional`.
import Module, { register } from 'node:module';

const blocked = (process.env.BLOCK_PACKAGES ?? '').split(',').filter(Boolean);
const isBlocked = (id) => blocked.some((b) => id === b || id.startsWith(`${b}/`));

register(new URL('./blockPackagesHooks.mjs', import.meta.url), { data: blocked });

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (isBlocked(request)) {
    const error = new Error(`Cannot find module '${request}'`);
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolveFilename.call(this, request, ...rest);
};
