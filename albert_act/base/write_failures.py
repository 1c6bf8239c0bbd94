"""The words of a failed write or read: a full disk, a read-only folder, a file that does not read whole, and
TensorFlow's messages about them without its op and function names."""

import os
import re
import sys


def tf_message(error):
    """The first line of an error's message without TensorFlow's function and op names around it:
    "corrupted record at 0 (Is this even a TFRecord file?)", "truncated record at 99533: Read less bytes than
    requested"."""
    text = str(getattr(error, "message", None) or error).splitlines()[0] if str(error) else repr(error)
    text = re.sub(r"\{\{function_node [^}]*\}\}\s*", "", text)
    text = re.sub(r"(\d)' failed with ", r"\1: ", text)  # "truncated record at 99533' failed with Read less ..."
    return re.sub(r"\s*\[Op:[^\]]*\].*$", "", text).strip()


def write_errors():
    """The exception types of a failed write (a full disk, a read-only folder): OSError, and
    TensorFlow's own when it is loaded (its savers raise ResourceExhaustedError on a full disk)."""
    tf = sys.modules.get("tensorflow")
    if tf is None or not hasattr(tf, "errors"):
        return (OSError,)
    return (OSError, tf.errors.ResourceExhaustedError, tf.errors.PermissionDeniedError,
            *(getattr(tf.errors, name) for name in REMOTE_ERRORS))


REMOTE_ERRORS = ("FailedPreconditionError", "UnavailableError", "UnimplementedError", "DeadlineExceededError")


WRITE_ERRNOS = {"ENOSPC", "EDQUOT", "EROFS", "EACCES", "EPERM", "EFBIG"}  # a write the system refused


def io_failure(error, output, kept):
    """The line for an error of `write_errors()`: a refused write (a full disk, a read-only or
    foreign folder) says it could not write `output` and what is `kept`; any other (a file that
    does not read whole, a remote path that did not answer) is given in its own words and file."""
    import errno

    if type(error).__name__ in REMOTE_ERRORS:  # tf.io.gfile on gs:// without network, hdfs:// without Hadoop
        text = " ".join(str(getattr(error, "message", None) or error).split())
        if "://" not in text:
            raise error  # not a remote path's: a fault of the code, with its traceback
        return text
    if isinstance(error, OSError) and errno.errorcode.get(error.errno) not in WRITE_ERRNOS:
        return write_error(error)
    if isinstance(error, PermissionError) and error.filename and os.path.isfile(error.filename) and not os.access(
            error.filename, os.R_OK):  # an input the user cannot read (a --vocab of mode 000): not a write
        return (f"could not read {error.filename}: {error.strerror}; make it readable (chmod u+r {error.filename}), "
                f"or give a copy you can read; {kept}")
    if isinstance(error, OSError) and error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):  # not a full disk
        writable = "make the output's folder writable (or choose another)"
        kept = (kept.replace("free space", writable) if "free space" in kept
                else kept.replace("re-run the same command", f"{writable}, then re-run"))
    reason = write_error(error)
    if "No space left" in reason and "free space" not in kept:  # (a re-run as it is would fail the same)
        kept = kept.replace("re-run the same command", "free space and re-run the same command")
    return f"could not write {output}: {reason}; {kept}"


def write_error(error):
    """Why a write failed, in the system's words: "No space left on device" (an OSError's reason and
    file; TensorFlow's save errors end in the reason after the temporary file's name)."""
    if isinstance(error, OSError):
        return f"{error.strerror or error}" + (f" ({error.filename})" if error.filename else "")
    where, _, reason = tf_message(error).rpartition("; ")
    where = re.sub(r"(/\.staging-[^/]*|_temp)/.*$", "", where)  # the output, not its temporary file
    return f"{reason} ({where})" if where else reason
