package testenv

// OddHostsScript is a shell command for srt's sandbox that sends its
// proxies host names that are not plain words (OddHosts): through SOCKS5,
// whose name field carries any byte, one that would erase the terminal's
// line and write a line of srt's own; through CONNECT (net/http lets
// bytes above 0x7f through) one with a right-to-left override. It needs
// python3, and prints "socks 02\nconnect 403\n" when the proxies refuse
// both, as they must.
const OddHostsScript = `python3 -c '
import base64, os, socket, urllib.parse
u = urllib.parse.urlsplit(os.environ["FTP_PROXY"])
user, pw = urllib.parse.unquote(u.username).encode(), u.password.encode()
name = b"\x1b[2K\rsrt: all clear\n"
s = socket.create_connection(("127.0.0.1", u.port))
s.sendall(b"\x05\x01\x02" + bytes([1, len(user)]) + user + bytes([len(pw)]) + pw + b"\x05\x01\x00\x03" + bytes([len(name)]) + name + b"\x01\xbb")
got = b""
while len(got) < 6:
    more = s.recv(64)
    if not more:
        break
    got += more
print("socks", got[5:6].hex())
h = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
auth = base64.b64encode(urllib.parse.unquote(h.username).encode() + b":" + h.password.encode())
c = socket.create_connection(("127.0.0.1", h.port))
c.sendall(b"CONNECT moc.\xe2\x80\xaelive:443 HTTP/1.1\r\nHost: x\r\nProxy-Authorization: Basic " + auth + b"\r\n\r\n")
print("connect", c.recv(64).split(b" ")[1].decode())
'`

// OddHosts are the names OddHostsScript sends, each to port 443: through
// SOCKS5, then through CONNECT.
var OddHosts = []string{"\x1b[2K\rsrt: all clear\n", "moc.\u202elive"}
