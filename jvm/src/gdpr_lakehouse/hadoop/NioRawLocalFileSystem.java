package gdpr_lakehouse.hadoop;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's local file system, without a process per file.
 *
 * <p>Without Hadoop's native library (pyspark ships none), {@link RawLocalFileSystem} runs
 * {@code chmod} for every file it creates and {@code readlink} for every file status a rename
 * asks for: a Delta commit renames its log entry and checksum through {@code FileContext}
 * (four {@code readlink}s a rename), and every data, deletion-vector and {@code .crc} file is
 * created with a permission. A one-subject {@code gdpr_erase} started ~390 processes.
 *
 * <p>Here both go through {@code java.nio} in the JVM: the same permission bits, the same file
 * status. A path that is a symbolic link, and a permission with bits beyond {@code rwxrwxrwx}
 * (sticky, setuid), keep Hadoop's own code.
 */
public class NioRawLocalFileSystem extends RawLocalFileSystem {
  // bit i of a POSIX mode, from the lowest: o+x, o+w, o+r, g+x, g+w, g+r, u+x, u+w, u+r
  private static final PosixFilePermission[] BITS = {
    PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE,
    PosixFilePermission.OTHERS_READ, PosixFilePermission.GROUP_EXECUTE,
    PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
    PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE,
    PosixFilePermission.OWNER_READ,
  };

  /** The POSIX permissions of a mode of at most 0777. */
  static Set<PosixFilePermission> posix(short mode) {
    Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
    for (int bit = 0; bit < BITS.length; bit++) {
      if ((mode & (1 << bit)) != 0) {
        set.add(BITS[bit]);
      }
    }
    return set;
  }

  @Override
  public void setPermission(Path p, FsPermission permission) throws IOException {
    short mode = permission.toShort();
    if ((mode & ~0777) != 0) {
      super.setPermission(p, permission);
      return;
    }
    Files.setPosixFilePermissions(pathToFile(p).toPath(), posix(mode));
  }

  /**
   * Hadoop's answer for a path that is not a symbolic link is {@link #getFileStatus} (it asks
   * {@code readlink}, which prints nothing for such a path, then returns that status, or throws
   * the same FileNotFoundException for a path that does not exist).
   */
  @Override
  public FileStatus getFileLinkStatus(Path f) throws IOException {
    if (!Files.isSymbolicLink(pathToFile(f).toPath())) {
      return getFileStatus(f);
    }
    return super.getFileLinkStatus(f);
  }
}
