// Size limits shared by the doors and the domain, kept here so rest-adapters/ need not import src/domain/.

/** The largest plugin package an upload may carry (spec 3, 4.1): the REST adapter stops reading past it. */
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;
