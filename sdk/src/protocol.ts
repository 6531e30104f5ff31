// The protocol module: constants, types and strict schemas of switchyard.plugin/v1.
export * from './constants.js';
export * from './schemas.js';
export {
  validateManifest,
  parseManifest,
  identityOf,
  executablePathErrors,
  type ManifestValidation,
} from './manifest.js';
export { identityProblems, sameSet, type ExpectedIdentity } from './identity.js';
