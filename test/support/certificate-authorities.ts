import {
  type CertificateAuthority,
  createCertificateAuthority,
} from '../../src/network/certificate-authority.js';

/**
 * Certificate authorities made once per test process: making one generates two RSA-2048 keys (0.3–0.6 s of
 * CPU), and the tests that terminate or serve TLS need a CA, not a new one each. `runCa()` stands for the
 * run's intercepting CA, `upstreamCa()` for a destination's own (test upstream servers), so a test still
 * holds two authorities apart where it needs both. A test of the CA itself makes its own.
 */
let run: CertificateAuthority | undefined;
let upstream: CertificateAuthority | undefined;

export function runCa(): CertificateAuthority {
  run ??= createCertificateAuthority();
  return run;
}

export function upstreamCa(): CertificateAuthority {
  upstream ??= createCertificateAuthority({ commonName: 'test upstream CA' });
  return upstream;
}
