package gdpr_lakehouse.engine;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import javax.security.sasl.AuthenticationException;
import org.apache.hive.service.auth.PasswdAuthenticationProvider;

/**
 * The warm engine's Thrift server, and the loopback cluster's, admit a client only when its
 * password is the server's token ({@code hive.server2.authentication=CUSTOM}, this class as
 * {@code hive.server2.custom.authentication.class}). The engine (python_jobs/engine.py) and
 * {@code cluster up} (python_jobs/cluster.py) make a new random token at every start, write
 * it to a file only their user can read, and give this JVM its SHA-256 alone, in the system
 * property {@link #DIGEST_PROPERTY}: the token itself is never in the JVM, its settings or
 * its log. The user name is not checked (it
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
          "refused: the password is not this server's token (in the lakehouse folder of the "
              + "user who started it: engine/token for `make up`, cluster/token for `make "
              + "cluster-up`)");
    }
  }

  private static byte[] expectedDigest() throws AuthenticationException {
    String digest = System.getProperty(DIGEST_PROPERTY, "");
    if (!digest.matches("[0-9a-f]{64}")) {
      throw new AuthenticationException(
          "this server has no token digest (" + DIGEST_PROPERTY + "): refusing every client");
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
