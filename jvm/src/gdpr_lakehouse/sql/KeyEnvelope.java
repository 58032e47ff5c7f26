package gdpr_lakehouse.sql;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The key envelope, inside the JVM: SQL wraps a new key with {@code gdpr_wrap_key(key,
 * 'LAKEHOUSE_KEK')} and uses a wrapped key only through functions that open it where no
 * statement can see it ({@link KeyEnvelopeExtension}): {@code gdpr_encrypt}, {@code
 * gdpr_decrypt}, {@code gdpr_try_decrypt}, {@code gdpr_keyed_hash} and {@code gdpr_key_opens}.
 * No function returns the key-encryption key or an unwrapped key, so neither can be copied
 * out of the engine by a query: a subject's key lives only in the vault, wrapped, and an
 * erasure that deletes it leaves no copy a session made. (The macros read the KEK with
 * {@code java_method('java.lang.System', 'getenv', ...)} before, and an unwrap function
 * followed, which returned the subject's key to any statement.)
 *
 * <p>Every ciphertext is in Spark's {@code aes_encrypt(value, key, 'GCM', 'DEFAULT', '', aad)}
 * format: a 12-byte random IV, then the ciphertext and its 16-byte tag, authenticated with
 * additional data that says what it belongs to: a wrapped key its subject (or system key name),
 * a value its subject's pseudonym and column (macros encrypt_pii, wrap_key). A ciphertext or a
 * key moved to another row or column does not open there. An empty binding is no binding: a
 * lakehouse made before bindings is migrated by macro bind_ciphertexts.
 */
public final class KeyEnvelope {
  private static final int IV_BYTES = 12;
  private static final int TAG_BITS = 128;
  private static final SecureRandom RANDOM = new SecureRandom();
  /** The last key opened by this thread: a statement opens the same key row after row. */
  private static final ThreadLocal<Object[]> LAST_OPENED = new ThreadLocal<>();
  private static final Pattern VARIABLE = Pattern.compile("[A-Z][A-Z0-9_]{0,63}");
  private static final Pattern KEY_HEX = Pattern.compile("[0-9a-fA-F]{64}");
  /**
   * The KEK parsed from each variable, once per JVM (a process's environment does not change;
   * a statement encrypting eight columns asked eight times per row). A missing one is not kept.
   */
  private static final ConcurrentHashMap<String, byte[]> KEKS = new ConcurrentHashMap<>();

  private KeyEnvelope() {}

  /**
   * The key wrapped by the key-encryption key in {@code variable}, bound to {@code binding}
   * (additional authenticated data: the subject or system key it belongs to), so a wrapped key
   * moved to another row does not open there; fails without a key-encryption key.
   */
  public static byte[] wrap(byte[] key, byte[] binding, UTF8String variable) {
    return seal(kek(variable, true), key, binding, "gdpr_wrap_key: the key could not be wrapped");
  }

  /**
   * {@code value} encrypted under the wrapped key (opened with its {@code binding}), AES-256-GCM
   * with a fresh IV and {@code aad} as additional authenticated data (the subject's pseudonym and
   * the column), so the ciphertext opens only where it was written.
   */
  public static byte[] encrypt(
      byte[] value, byte[] wrapped, byte[] binding, byte[] aad, UTF8String variable) {
    return seal(openOrFail(wrapped, binding, variable, "gdpr_encrypt"), value, aad, "gdpr_encrypt");
  }

  /**
   * {@code cipher} decrypted with the wrapped key; NULL when it is not a ciphertext of that key
   * and {@code aad}. Fails without the key-encryption key or when it does not open the wrapped
   * key with its binding.
   */
  public static byte[] decrypt(
      byte[] cipher, byte[] wrapped, byte[] binding, byte[] aad, UTF8String variable) {
    return open(cipher, openOrFail(wrapped, binding, variable, "gdpr_decrypt"), aad);
  }

  /** Like {@link #decrypt}, NULL also where the process has no key-encryption key or it does not open the key. */
  public static byte[] tryDecrypt(
      byte[] cipher, byte[] wrapped, byte[] binding, byte[] aad, UTF8String variable) {
    byte[] kek = kek(variable, false);
    byte[] key = kek == null ? null : opened(wrapped, binding, kek);
    return key == null ? null : open(cipher, key, aad);
  }

  /** sha2(concat(key, data), 256) in hex, as Spark writes it, with the wrapped key opened. */
  public static UTF8String keyedHash(
      byte[] wrapped, byte[] binding, byte[] data, UTF8String variable) {
    byte[] key = openOrFail(wrapped, binding, variable, "gdpr_keyed_hash");
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      digest.update(key);
      digest.update(data);
      return UTF8String.fromString(HexFormat.of().formatHex(digest.digest()));
    } catch (GeneralSecurityException error) {
      throw new IllegalStateException("gdpr_keyed_hash: " + error);
    }
  }

  /**
   * Whether the key-encryption key in {@code variable} opens the wrapped key with its binding
   * (false without one).
   */
  public static boolean opens(byte[] wrapped, byte[] binding, UTF8String variable) {
    byte[] kek = kek(variable, false);
    return kek != null && opened(wrapped, binding, kek) != null;
  }

  /**
   * The migration to bound ciphertexts (macro bind_ciphertexts): the wrapped key bound to {@code
   * binding}. A key that already opens with it comes back unchanged; one wrapped without a
   * binding (a lakehouse made before bindings) is wrapped again with it; any other fails.
   */
  public static byte[] bindKey(byte[] wrapped, byte[] binding, UTF8String variable) {
    byte[] kek = kek(variable, true);
    if (opened(wrapped, binding, kek) != null) {
      return wrapped;
    }
    byte[] key = opened(wrapped, new byte[0], kek);
    if (key == null) {
      throw new IllegalStateException(
          "gdpr_bind_key: the key-encryption key in the environment variable "
              + variable
              + " opens a stored key neither with its binding nor without one; nothing was"
              + " written");
    }
    return seal(kek, key, binding, "gdpr_bind_key");
  }

  private static byte[] openOrFail(
      byte[] wrapped, byte[] binding, UTF8String variable, String function) {
    byte[] key = opened(wrapped, binding, kek(variable, true));
    if (key == null) {
      throw new IllegalStateException(
          function
              + ": the key-encryption key in the environment variable "
              + variable
              + " does not open a stored key with the binding it was given (another lakehouse's"
              + " key, a key moved from another subject's row, or a damaged one); nothing was"
              + " written");
    }
    return key;
  }

  private static byte[] opened(byte[] wrapped, byte[] binding, byte[] kek) {
    Object[] last = LAST_OPENED.get();
    if (last != null
        && Arrays.equals((byte[]) last[0], wrapped)
        && Arrays.equals((byte[]) last[1], kek)
        && Arrays.equals((byte[]) last[3], binding)) {
      return (byte[]) last[2];
    }
    byte[] key = open(wrapped, kek, binding);
    if (key != null) {
      LAST_OPENED.set(new Object[] {wrapped.clone(), kek, key, binding.clone()});
    }
    return key;
  }

  private static byte[] seal(byte[] key, byte[] value, byte[] aad, String what) {
    byte[] iv = new byte[IV_BYTES];
    RANDOM.nextBytes(iv);
    try {
      Cipher cipher = cipher(Cipher.ENCRYPT_MODE, key, iv);
      cipher.updateAAD(aad);
      byte[] sealed = cipher.doFinal(value);
      byte[] out = new byte[IV_BYTES + sealed.length];
      System.arraycopy(iv, 0, out, 0, IV_BYTES);
      System.arraycopy(sealed, 0, out, IV_BYTES, sealed.length);
      return out;
    } catch (GeneralSecurityException error) {
      throw new IllegalStateException(what + ": " + error);
    }
  }

  private static byte[] open(byte[] sealed, byte[] key, byte[] aad) {
    if (sealed.length < IV_BYTES + TAG_BITS / 8) {
      return null;
    }
    byte[] iv = Arrays.copyOfRange(sealed, 0, IV_BYTES);
    try {
      Cipher cipher = cipher(Cipher.DECRYPT_MODE, key, iv);
      cipher.updateAAD(aad);
      return cipher.doFinal(sealed, IV_BYTES, sealed.length - IV_BYTES);
    } catch (GeneralSecurityException | RuntimeException error) {
      return null;  // not sealed with this key
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
    byte[] known = KEKS.get(name);
    if (known != null) {
      return known;
    }
    if (!VARIABLE.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "the key-encryption key's environment variable must be a name (A-Z, 0-9, _), got "
              + name.substring(0, Math.min(name.length(), 64)));
    }
    String hex = System.getenv(name);
    if (hex == null || !KEY_HEX.matcher(hex).matches()) {
      if (required) {
        throw new IllegalStateException(
            "the key-encryption key is not in the environment variable "
                + name
                + " of this Spark process; nothing was written");
      }
      return null;
    }
    byte[] kek = HexFormat.of().parseHex(hex);
    KEKS.putIfAbsent(name, kek);
    return kek;
  }
}
