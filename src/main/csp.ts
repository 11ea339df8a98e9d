/**
 * The renderer's Content-Security-Policy, one string for both bridges
 * (Electron session headers and the loopback HTTP server). No inline or
 * remote scripts, no eval, no plugins, no framing; connections only to self.
 * Inline styles are allowed because charts set style attributes.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')
