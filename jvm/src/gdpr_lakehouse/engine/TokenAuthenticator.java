package gdpr_lakehouse.engine;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import javax.security.sasl.AuthenticationException;
import org.apache.hive.service.auth.PasswdAuthenticationProvider;

/**
 * The warm engine's Thrift server admits a client only when its password is the engine's
 * token ({@code hive.server2.authentication=CUSTOM}, this class as {@code
 * hive.server2.custom.authentication.class}). The engine (python_jobs/engine.py) makes a
 * new random token at every start, writes it to a file only its user can read, and gives
 * this JVM its SHA-256 alone, in the system property {@link #DIGEST_PROPERTY}: the token
 * itself is never in the JVM, its settings or its log. The user name is not checked (it
 * is who the commits name, not a credential).
 *
 * <p>Fail closed: no digest, or one that is not 64 hex characters, refuses everyone.
 * Hive builds a new instance for every connection, so the property is read each time.
 */
public final class TokenAuthenticator implements PasswdAuthenticationProvider {
  public static final String DIGEST_PROPERTY = "gdpr_lakehouse.engine.token.sha256";

  @Override
  public void Authenticate(String user, String password) throws AuthenticationException {
    byte[] expected = expectedDigest();
    byte[] given = sha256(password == null ? "" : password);
    if (!MessageDigest.isEqual(expected, given)) {
      throw new AuthenticationException(
          "the warm engine refused the connection: the password is not its token (the file "
              + "engine/token in the lakehouse folder of the user who ran `make up`)");
    }
  }

  private static byte[] expectedDigest() throws AuthenticationException {
    String digest = System.getProperty(DIGEST_PROPERTY, "");
    if (!digest.matches("[0-9a-f]{64}")) {
      throw new AuthenticationException(
          "the warm engine has no token digest (" + DIGEST_PROPERTY + "): refusing every client");
    }
    return HexFormat.of().parseHex(digest);
  }

  private static byte[] sha256(String text) throws AuthenticationException {
    try {
      return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new AuthenticationException("no SHA-256 in this JVM", e);
    }
  }
}
