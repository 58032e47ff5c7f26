package gdpr_lakehouse.hadoop;

import org.apache.hadoop.fs.LocalFileSystem;

/**
 * {@code fs.file.impl}: Hadoop's checksummed local file system over {@link
 * NioRawLocalFileSystem}, as {@link LocalFileSystem} is over {@code RawLocalFileSystem}.
 */
public class NioLocalFileSystem extends LocalFileSystem {
  public NioLocalFileSystem() {
    super(new NioRawLocalFileSystem());
  }
}
