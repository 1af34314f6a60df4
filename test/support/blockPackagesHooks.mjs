// Module hooks of blockPackages.mjs: `import` of a blocked package fails as a missing one does.
let blocked = [];

export function initialize(data) {
  blocked = data;
}

export async function resolve(specifier, context, next) {
  if (blocked.some((b) => specifier === b || specifier.startsWith(`${b}/`))) {
    const error = new Error(
      `Cannot find package '${specifier}' imported from ${context.parentURL}`,
    );
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}
