import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import forge from 'node-forge';

/**
 * The per-run certificate authority of `intercept: true` (SPEC §14): a CA made fresh for one run (its key
 * never written anywhere but memory and the attempt's bundle holds only its certificate), and a leaf
 * certificate per host it is asked for, signed by it, so the egress proxy can terminate an agent's TLS
 * and record what it sends inside.
 *
 * Keys come from Node's own generator (native, tens of milliseconds for RSA-2048, where node-forge's
 * JavaScript one takes seconds); node-forge builds and signs the X.509 certificates, which Node cannot.
 * One leaf key serves every host of the run; each host's certificate is made once and cached.
 *
 * The CA is valid for a day and constrained to nothing an agent could misuse outside the run: it exists
 * only in the run's memory and in the bundle handed to the attempt's sandbox.
 */

export interface HostCredentials {
  key: string;
  cert: string;
}

export interface CertificateAuthority {
  /** The CA certificate (PEM), to hand to the agent's runtimes. */
  readonly certificatePem: string;
  /** A certificate for `host` (a name or an IP address), signed by the CA, with the run's leaf key. */
  credentialsFor(host: string): HostCredentials;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** Hosts whose certificates are kept; beyond this the oldest is forgotten (remade when asked again). */
const MAX_CACHED_HOSTS = 512;

export function createCertificateAuthority(options: { commonName?: string } = {}): CertificateAuthority {
  const caKeys = rsaKeyPair();
  const leafKeys = rsaKeyPair();
  const now = Date.now();
  const caCert = forge.pki.createCertificate();
  caCert.publicKey = caKeys.publicKey;
  caCert.serialNumber = serial();
  caCert.validity.notBefore = new Date(now - 60_000);
  caCert.validity.notAfter = new Date(now + DAY_MS);
  const caName = [
    { name: 'commonName', value: options.commonName ?? 'Witness per-run egress CA' },
    { name: 'organizationName', value: 'Witness' },
  ];
  caCert.setSubject(caName);
  caCert.setIssuer(caName);
  caCert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true, pathLenConstraint: 0 },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  caCert.sign(caKeys.privateKey, forge.md.sha256.create());
  const certificatePem = forge.pki.certificateToPem(caCert);
  const leafKeyPem = forge.pki.privateKeyToPem(leafKeys.privateKey);
  const cache = new Map<string, HostCredentials>();

  return {
    certificatePem,
    credentialsFor(host: string): HostCredentials {
      const name = host.toLowerCase();
      const cached = cache.get(name);
      if (cached !== undefined) return cached;
      const cert = forge.pki.createCertificate();
      cert.publicKey = leafKeys.publicKey;
      cert.serialNumber = serial();
      cert.validity.notBefore = new Date(Date.now() - 60_000);
      cert.validity.notAfter = new Date(Date.now() + DAY_MS);
      cert.setSubject([{ name: 'commonName', value: name.slice(0, 64) }]);
      cert.setIssuer(caCert.subject.attributes);
      const altName = isIP(name) === 0 ? { type: 2, value: name } : { type: 7, ip: name };
      cert.setExtensions([
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
        { name: 'extKeyUsage', serverAuth: true },
        { name: 'subjectAltName', altNames: [altName] },
        { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
      ]);
      cert.sign(caKeys.privateKey, forge.md.sha256.create());
      const credentials = { key: leafKeyPem, cert: forge.pki.certificateToPem(cert) };
      if (cache.size >= MAX_CACHED_HOSTS) cache.delete(cache.keys().next().value as string);
      cache.set(name, credentials);
      return credentials;
    },
  };
}

function rsaKeyPair(): { publicKey: forge.pki.rsa.PublicKey; privateKey: forge.pki.rsa.PrivateKey } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return {
    publicKey: forge.pki.publicKeyFromPem(publicKey),
    privateKey: forge.pki.privateKeyFromPem(privateKey),
  };
}

/** A positive serial number (the top bit clear, as DER integers are signed). */
function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] as number) & 0x7f;
  return bytes.toString('hex');
}
