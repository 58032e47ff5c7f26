package gdpr_lakehouse.engine;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HexFormat;

/**
 * The loopback cluster's web UIs (the standalone master's and the worker's: Spark opens them
 * whatever the port setting, and the master's can kill applications) admit a request only
 * when its HTTP basic password is the cluster's token ({@code spark.ui.filters}, this class;
 * {@code spark.gdpr_lakehouse.engine.TokenFilter.param.sha256}, the token's SHA-256 alone, in
 * the cluster's spark-defaults.conf). The user name is not checked.
 *
 * <p>Fail closed: no digest, or one that is not 64 hex characters, refuses every request.
 */
public final class TokenFilter implements Filter {
  public static final String DIGEST_PARAM = "sha256";

  private byte[] expected;

  @Override
  public void init(FilterConfig config) {
    String digest = config.getInitParameter(DIGEST_PARAM);
    expected =
        digest != null && digest.matches("[0-9a-f]{64}") ? HexFormat.of().parseHex(digest) : null;
  }

  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    HttpServletRequest http = (HttpServletRequest) request;
    if (expected != null && MessageDigest.isEqual(expected, sha256(password(http)))) {
      chain.doFilter(request, response);
      return;
    }
    HttpServletResponse answer = (HttpServletResponse) response;
    answer.setHeader("WWW-Authenticate", "Basic realm=\"gdpr_lakehouse cluster\"");
    answer.sendError(
        HttpServletResponse.SC_UNAUTHORIZED,
        expected == null
            ? "this server has no token digest: refusing every request"
            : "refused: the password is not the cluster's token (cluster/token)");
  }

  private static String password(HttpServletRequest request) {
    String header = request.getHeader("Authorization");
    if (header == null || !header.regionMatches(true, 0, "Basic ", 0, 6)) {
      return "";
    }
    try {
      String decoded =
          new String(Base64.getDecoder().decode(header.substring(6).trim()), StandardCharsets.UTF_8);
      int colon = decoded.indexOf(':');
      return colon < 0 ? "" : decoded.substring(colon + 1);
    } catch (IllegalArgumentException e) {
      return "";
    }
  }

  private static byte[] sha256(String text) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("no SHA-256 in this JVM", e);
    }
  }

  @Override
  public void destroy() {}
}
