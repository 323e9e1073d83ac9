// fieldgo's interactive isosurface (fg.view3d): a triangle mesh with vertex colours,
// drawn with WebGL (a 2D canvas where WebGL is missing), orthographic, z up.
// Drag rotates, the wheel zooms, a double click resets. Inlined into the HTML that
// fg.view3d returns, so that a notebook shows it without a network or an extension.
// The div's data-renderer says which renderer drew and data-frames how many frames.
function fieldgoView3d(id, data) {
  "use strict";
  var root = document.getElementById(id);
  if (!root || root.dataset.frames) return;
  var note = root.querySelector(".fieldgo-view3d-note");
  if (note) note.style.display = "none";
  var canvases = root.getElementsByTagName("canvas");
  var canvas = canvases[0], overlay = canvases[1];
  var W = canvas.width, H = canvas.height;

  function decode(b64, Type) {
    var bin = atob(b64), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new Type(bytes.buffer);
  }
  var pos = decode(data.positions, Float32Array);
  var nrm = decode(data.normals, Float32Array);
  var col = decode(data.colours, Uint8Array);
  var idx = decode(data.indices, Uint32Array);
  var lo = data.bounds[0], hi = data.bounds[1];
  var centre = [(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2];
  var radius = 0.5 * Math.sqrt(Math.pow(hi[0] - lo[0], 2) + Math.pow(hi[1] - lo[1], 2) + Math.pow(hi[2] - lo[2], 2)) || 1;
  var view = { yaw: -0.6, pitch: 0.45, zoom: 1.0 };
  var light = [-0.35, 0.45, 0.82];
  var AMBIENT = 0.35;

  // world (x, y, z) -> screen (X right, Y up, Z to the viewer): yaw about z, then
  // look along +y with z up, then tilt by pitch about the screen's X axis
  function rotation() {
    var cy = Math.cos(view.yaw), sy = Math.sin(view.yaw), cp = Math.cos(view.pitch), sp = Math.sin(view.pitch);
    // rows of Rview * Ryaw: X = x', Y = z, Z = -y' with x' = c x - s y, y' = s x + c y
    var A = [[cy, -sy, 0], [0, 0, 1], [-sy, -cy, 0]];
    return [A[0], [cp * A[1][0] - sp * A[2][0], cp * A[1][1] - sp * A[2][1], cp * A[1][2] - sp * A[2][2]],
            [sp * A[1][0] + cp * A[2][0], sp * A[1][1] + cp * A[2][1], sp * A[1][2] + cp * A[2][2]]];
  }
  function scales() {
    var s = view.zoom / radius * 0.95;
    return W >= H ? [s * H / W, s] : [s, s * W / H];
  }

  function drawAxes(R) {
    var g = overlay.getContext("2d");
    g.clearRect(0, 0, W, H);
    var ox = 40, oy = H - 40, L = 26, names = ["x", "y", "z"];
    g.font = "12px sans-serif";
    g.strokeStyle = "#555"; g.fillStyle = "#333"; g.lineWidth = 1.5;
    for (var a = 0; a < 3; a++) {
      var ex = R[0][a], ey = R[1][a];
      g.beginPath(); g.moveTo(ox, oy); g.lineTo(ox + L * ex, oy - L * ey); g.stroke();
      g.fillText(names[a], ox + (L + 8) * ex - 3, oy - (L + 8) * ey + 4);
    }
    if (data.title) g.fillText(data.title, 8, 16);
  }

  var frames = 0;
  function done(renderer) {
    frames += 1;
    root.dataset.renderer = renderer;
    root.dataset.frames = String(frames);
  }

  var gl = null, renderer = "canvas2d";
  try {
    gl = canvas.getContext("webgl2", { antialias: true });
    if (gl) renderer = "webgl2";
    else {
      gl = canvas.getContext("webgl", { antialias: true }) || canvas.getContext("experimental-webgl");
      if (gl && !gl.getExtension("OES_element_index_uint")) gl = null;
      if (gl) renderer = "webgl";
    }
  } catch (e) { gl = null; }

  var draw;
  if (gl) {
    var vs = "attribute vec3 p; attribute vec3 n; attribute vec3 c; uniform mat3 R; uniform vec3 centre;" +
      "uniform vec2 scale; uniform float depth; uniform vec3 light; uniform float ambient; varying vec3 col;" +
      "void main() { vec3 q = R * (p - centre); gl_Position = vec4(q.x * scale.x, q.y * scale.y, -q.z * depth, 1.0);" +
      "float d = abs(dot(normalize(R * n), light)); col = c * (ambient + (1.0 - ambient) * d); }";
    var fs = "precision mediump float; varying vec3 col; void main() { gl_FragColor = vec4(col, 1.0); }";
    var compile = function (type, src) {
      var s = gl.createShader(type);
      gl.shaderSource(s, src); gl.compileShader(s);
      if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
      return s;
    };
    var prog = gl.createProgram();
    gl.attachShader(prog, compile(gl.VERTEX_SHADER, vs));
    gl.attachShader(prog, compile(gl.FRAGMENT_SHADER, fs));
    gl.linkProgram(prog);
    gl.useProgram(prog);
    var attribute = function (name, array, size, type, normalized) {
      var b = gl.createBuffer();
      gl.bindBuffer(gl.ARRAY_BUFFER, b);
      gl.bufferData(gl.ARRAY_BUFFER, array, gl.STATIC_DRAW);
      var loc = gl.getAttribLocation(prog, name);
      gl.enableVertexAttribArray(loc);
      gl.vertexAttribPointer(loc, size, type, normalized, 0, 0);
    };
    attribute("p", pos, 3, gl.FLOAT, false);
    attribute("n", nrm, 3, gl.FLOAT, false);
    attribute("c", col, 3, gl.UNSIGNED_BYTE, true);
    var ib = gl.createBuffer();
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, ib);
    gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, idx, gl.STATIC_DRAW);
    var u = function (name) { return gl.getUniformLocation(prog, name); };
    gl.enable(gl.DEPTH_TEST);
    gl.clearColor(1, 1, 1, 1);
    draw = function () {
      var R = rotation(), sc = scales();
      gl.viewport(0, 0, W, H);
      gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
      gl.uniformMatrix3fv(u("R"), false, new Float32Array([R[0][0], R[1][0], R[2][0], R[0][1], R[1][1], R[2][1],
                                                           R[0][2], R[1][2], R[2][2]]));
      gl.uniform3fv(u("centre"), centre);
      gl.uniform2fv(u("scale"), sc);
      gl.uniform1f(u("depth"), 0.99 / radius);
      gl.uniform3fv(u("light"), light);
      gl.uniform1f(u("ambient"), AMBIENT);
      gl.drawElements(gl.TRIANGLES, idx.length, gl.UNSIGNED_INT, 0);
      drawAxes(R);
      done(renderer);
    };
  } else {
    // painter's algorithm: faces sorted back to front, each filled flat-shaded
    var g = canvas.getContext("2d");
    var nf = idx.length / 3, order = new Uint32Array(nf), depth = new Float32Array(nf);
    var sx = new Float32Array(pos.length / 3), sy = new Float32Array(pos.length / 3), sz = new Float32Array(pos.length / 3);
    draw = function () {
      var R = rotation(), sc = scales();
      for (var v = 0; v < sx.length; v++) {
        var x = pos[3 * v] - centre[0], y = pos[3 * v + 1] - centre[1], z = pos[3 * v + 2] - centre[2];
        sx[v] = (1 + (R[0][0] * x + R[0][1] * y + R[0][2] * z) * sc[0]) * W / 2;
        sy[v] = (1 - (R[1][0] * x + R[1][1] * y + R[1][2] * z) * sc[1]) * H / 2;
        sz[v] = R[2][0] * x + R[2][1] * y + R[2][2] * z;
      }
      for (var f = 0; f < nf; f++) {
        order[f] = f;
        depth[f] = sz[idx[3 * f]] + sz[idx[3 * f + 1]] + sz[idx[3 * f + 2]];
      }
      order.sort(function (a, b) { return depth[a] - depth[b]; });
      g.fillStyle = "#fff"; g.fillRect(0, 0, W, H);
      for (var k = 0; k < nf; k++) {
        var t = order[k], a = idx[3 * t], b = idx[3 * t + 1], c = idx[3 * t + 2];
        var ux = sx[b] - sx[a], uy = sy[b] - sy[a], wx = sx[c] - sx[a], wy = sy[c] - sy[a];
        // the face's normal on screen: its Z part, and light from the normal's direction
        var n = [0, 0, 0];
        for (var j = 0; j < 3; j++) n[j] = nrm[3 * a + j] + nrm[3 * b + j] + nrm[3 * c + j];
        var m = [R[0][0] * n[0] + R[0][1] * n[1] + R[0][2] * n[2], R[1][0] * n[0] + R[1][1] * n[1] + R[1][2] * n[2],
                 R[2][0] * n[0] + R[2][1] * n[1] + R[2][2] * n[2]];
        var len = Math.sqrt(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]) || 1;
        var shade = AMBIENT + (1 - AMBIENT) * Math.abs((m[0] * light[0] + m[1] * light[1] + m[2] * light[2]) / len);
        var rgb = [0, 1, 2].map(function (j) { return Math.round((col[3 * a + j] + col[3 * b + j] + col[3 * c + j]) / 3 * shade); });
        g.fillStyle = g.strokeStyle = "rgb(" + rgb.join(",") + ")";
        g.beginPath(); g.moveTo(sx[a], sy[a]); g.lineTo(sx[a] + ux, sy[a] + uy); g.lineTo(sx[a] + wx, sy[a] + wy);
        g.closePath(); g.fill(); g.stroke();
      }
      drawAxes(R);
      done("canvas2d");
    };
  }

  var pending = false;
  function redraw() {
    if (pending) return;
    pending = true;
    (window.requestAnimationFrame || setTimeout)(function () { pending = false; draw(); });
  }
  var drag = null;
  canvas.addEventListener("mousedown", function (e) { drag = [e.clientX, e.clientY]; e.preventDefault(); });
  window.addEventListener("mouseup", function () { drag = null; });
  window.addEventListener("mousemove", function (e) {
    if (!drag) return;
    view.yaw += (e.clientX - drag[0]) * 0.01;
    view.pitch = Math.max(-1.57, Math.min(1.57, view.pitch + (e.clientY - drag[1]) * 0.01));
    drag = [e.clientX, e.clientY];
    redraw();
  });
  canvas.addEventListener("wheel", function (e) {
    view.zoom = Math.max(0.2, Math.min(20, view.zoom * Math.exp(-e.deltaY * 0.001)));
    e.preventDefault();
    redraw();
  }, { passive: false });
  canvas.addEventListener("dblclick", function () { view.yaw = -0.6; view.pitch = 0.45; view.zoom = 1.0; redraw(); });
  draw();
}
