package gdpr_lakehouse.hadoop;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFs;

/**
 * {@code fs.AbstractFileSystem.file.impl}: Hadoop's checksummed {@code FileContext} local file
 * system ({@code org.apache.hadoop.fs.local.LocalFs}) over {@link NioRawLocalFs}.
 */
public class NioLocalFs extends ChecksumFs {
  public NioLocalFs(URI uri, Configuration conf) throws IOException, URISyntaxException {
    super(new NioRawLocalFs(uri, conf));
  }
}
