package gdpr_lakehouse.sql;

import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.HexFormat;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The key envelope's wrap and unwrap, inside the JVM: SQL calls them as {@code
 * gdpr_wrap_key(key, 'LAKEHOUSE_KEK')}, {@code gdpr_unwrap_key(wrapped, 'LAKEHOUSE_KEK')} and
 * {@code gdpr_try_unwrap_key(...)} ({@link KeyEnvelopeExtension}), and the key-encryption key
 * they read from the named environment variable never becomes a value a statement can
 * return. Before, the macros read it with {@code java_method('java.lang.System', 'getenv',
 * ...)}, which any statement of any session could call too.
 *
 * <p>The format is Spark's {@code aes_encrypt(key, kek, 'GCM')}: a 12-byte random IV, then
 * the ciphertext and its 16-byte tag, so keys wrapped before this class existed unwrap.
 */
public final class KeyEnvelope {
  private static final int IV_BYTES = 12;
  private static final int TAG_BITS = 128;
  private static final SecureRandom RANDOM = new SecureRandom();

  private KeyEnvelope() {}

  /** The key wrapped by the key-encryption key in {@code variable}; fails without one. */
  public static byte[] wrap(byte[] key, UTF8String variable) {
    byte[] iv = new byte[IV_BYTES];
    RANDOM.nextBytes(iv);
    try {
      byte[] sealed = cipher(Cipher.ENCRYPT_MODE, kek(variable, true), iv).doFinal(key);
      byte[] out = new byte[IV_BYTES + sealed.length];
      System.arraycopy(iv, 0, out, 0, IV_BYTES);
      System.arraycopy(sealed, 0, out, IV_BYTES, sealed.length);
      return out;
    } catch (GeneralSecurityException error) {
      throw new IllegalStateException("gdpr_wrap_key: the key could not be wrapped: " + error);
    }
  }

  /** The key a wrapped key holds; fails without the key-encryption key or when it does not open it. */
  public static byte[] unwrap(byte[] wrapped, UTF8String variable) {
    byte[] key = open(wrapped, kek(variable, true));
    if (key == null) {
      throw new IllegalStateException(
          "gdpr_unwrap_key: the key-encryption key in the environment variable "
              + variable
              + " does not open a stored key (another lakehouse's key, or a damaged one); nothing"
              + " was written");
    }
    return key;
  }

  /** Like {@link #unwrap}, NULL where the process has no key-encryption key or it does not open the key. */
  public static byte[] tryUnwrap(byte[] wrapped, UTF8String variable) {
    byte[] kek = kek(variable, false);
    return kek == null ? null : open(wrapped, kek);
  }

  private static byte[] open(byte[] wrapped, byte[] kek) {
    if (wrapped.length < IV_BYTES + TAG_BITS / 8) {
      return null;
    }
    byte[] iv = java.util.Arrays.copyOfRange(wrapped, 0, IV_BYTES);
    try {
      return cipher(Cipher.DECRYPT_MODE, kek, iv)
          .doFinal(wrapped, IV_BYTES, wrapped.length - IV_BYTES);
    } catch (GeneralSecurityException | RuntimeException error) {
      return null;  // not a key this key-encryption key wrapped
    }
  }

  private static Cipher cipher(int mode, byte[] kek, byte[] iv) throws GeneralSecurityException {
    Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
    cipher.init(mode, new SecretKeySpec(kek, "AES"), new GCMParameterSpec(TAG_BITS, iv));
    return cipher;
  }

  /** The 256-bit key in the environment variable; null (or an error when required) without one. */
  static byte[] kek(UTF8String variable, boolean required) {
    String name = variable == null ? "" : variable.toString();
    if (!name.matches("[A-Z][A-Z0-9_]{0,63}")) {
      throw new IllegalArgumentException(
          "the key-encryption key's environment variable must be a name (A-Z, 0-9, _), got "
              + name.substring(0, Math.min(name.length(), 64)));
    }
    String hex = System.getenv(name);
    if (hex == null || !hex.matches("[0-9a-fA-F]{64}")) {
      if (required) {
        throw new IllegalStateException(
            "the key-encryption key is not in the environment variable "
                + name
                + " of this Spark process; nothing was written");
      }
      return null;
    }
    return HexFormat.of().parseHex(hex);
  }
}
