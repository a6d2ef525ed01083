// A Node module-loader hook for one packaging bug of @actions/workflow-parser:
// its dist/ imports its two schema files (action-v1.0.min.json,
// workflow-v1.0.min.json) without the `with { type: "json" }` import
// attribute, which Node 20 and later refuse (ERR_IMPORT_ASSERTION_TYPE_MISSING
// on 20, ERR_IMPORT_ATTRIBUTE_MISSING on 22; reported upstream as
// actions/languageservices#387). The hook adds the attribute for exactly those
// files and changes nothing else; the schemas are loaded unmodified.
// Registered by lib.mjs through node:module's register().

const schemaFile = /\/@actions\/workflow-parser\/dist\/[a-z]+-v[0-9.]+\.min\.json$/;

export async function load(url, context, nextLoad) {
  if (schemaFile.test(url)) {
    return nextLoad(url, {
      ...context,
      importAttributes: { ...context.importAttributes, type: "json" },
    });
  }
  return nextLoad(url, context);
}
