"""Names a generated module must not take, and gets with a trailing underscore (`features_.h`, `inspect_.py`).

A `features.h` in `-I generated` hides glibc's (included by <math.h>: nothing compiles); a `re.py` or
`numbers.py` on sys.path hides the standard module (`import numpy` fails). The lists are fixed, not read from
the machine (the same file names everywhere), and compared case-insensitively (`Math.h` on macOS).
"""

#: headers of ISO C (C89 to C23), POSIX, and the C libraries' own top-level headers (glibc, musl,
#: macOS) that standard headers include
C_HEADERS = frozenset("""
assert complex ctype errno fenv float inttypes iso646 limits locale math setjmp signal stdalign stdarg stdatomic
stdbit stdbool stdckdint stddef stdint stdio stdlib stdnoreturn string tgmath threads time uchar wchar wctype
aio arpa cpio dirent dlfcn fcntl fmtmsg fnmatch ftw glob grp iconv langinfo libgen monetary mqueue ndbm netdb nl_types
poll pthread pwd regex sched search semaphore spawn strings stropts syslog tar termios trace ulimit unistd utime utmpx
wordexp
alloca aliases ar argp argz byteswap crypt elf endian envz err error execinfo features features_time64 fstab fts
gconv getopt gshadow ifaddrs lastlog libintl link malloc mcheck memory mntent obstack paths printf proc_service pty
re_comp regexp resolv sgtty shadow stab stdc_predef stdio_ext syscall sysexits termio thread_db ttyent ucontext
ustat utmp values wait xlocale
availability availabilitymacros availabilityinternal availabilityversions targetconditionals
""".split())

#: sys.stdlib_module_names of Python 3.10 to 3.14 (public names), and the modules the generated
#: code and symdyn import
PYTHON_MODULES = frozenset("""
abc aifc annotationlib antigravity argparse array ast asynchat asyncio asyncore atexit audioop base64 bdb binascii
binhex bisect builtins bz2 cProfile calendar cgi cgitb chunk cmath cmd code codecs codeop collections colorsys
compileall compression concurrent configparser contextlib contextvars copy copyreg crypt csv ctypes curses
dataclasses datetime dbm decimal difflib dis distutils doctest email encodings ensurepip enum errno faulthandler
fcntl filecmp fileinput fnmatch fractions ftplib functools gc genericpath getopt getpass gettext glob graphlib grp
gzip hashlib heapq hmac html http idlelib imaplib imghdr imp importlib inspect io ipaddress itertools json keyword
lib2to3 linecache locale logging lzma mailbox mailcap marshal math mimetypes mmap modulefinder msilib msvcrt
multiprocessing netrc nis nntplib nt ntpath nturl2path numbers opcode operator optparse os ossaudiodev pathlib pdb
pickle pickletools pipes pkgutil platform plistlib poplib posix posixpath pprint profile pstats pty pwd py_compile
pyclbr pydoc pydoc_data pyexpat queue quopri random re readline reprlib resource rlcompleter runpy sched secrets
select selectors shelve shlex shutil signal site smtpd smtplib sndhdr socket socketserver spwd sqlite3 sre_compile
sre_constants sre_parse ssl stat statistics string stringprep struct subprocess sunau symtable sys sysconfig syslog
tabnanny tarfile telnetlib tempfile termios textwrap this threading time timeit tkinter token tokenize tomllib trace
traceback tracemalloc tty turtle turtledemo types typing unicodedata unittest urllib uu uuid venv warnings wave
weakref webbrowser winreg winsound wsgiref xdrlib xml xmlrpc zipapp zipfile zipimport zlib zoneinfo
numpy np symdyn cffi jinja2 yaml symengine
""".split())

RESERVED = frozenset(name.casefold() for name in C_HEADERS | PYTHON_MODULES)


def shadows(name):
    """Would a module of this name hide a C header or a Python module?"""
    return name.casefold() in RESERVED
